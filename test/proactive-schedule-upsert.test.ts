import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROACTIVE } from '../src/core/proactive/settings';
import { ensureProactiveSchedules } from '../src/proactive/proactive-schedules';

// A purge deletes the user's schedules while a settings change brings them in line: the
// create finds the schedule, the purge deletes it, the update finds nothing. Pure: a fake
// schedule client stands for Temporal (the real one is in proactive-schedules.int.test.ts).
function fakeTemporal(script: { existsAtCreate: boolean[]; updateFails: boolean[] }) {
  const calls: string[] = [];
  const schedule = {
    create: async ({ scheduleId }: { scheduleId: string }) => {
      calls.push(`create ${scheduleId}`);
      if (script.existsAtCreate.shift()) throw new ScheduleAlreadyRunning('exists', scheduleId);
    },
    getHandle: (scheduleId: string) => ({
      update: async () => {
        calls.push(`update ${scheduleId}`);
        if (script.updateFails.shift()) throw new ScheduleNotFoundError('gone', scheduleId);
      },
    }),
  };
  return { temporal: { schedule } as unknown as Client, calls };
}

const settings = { timezone: 'Europe/Lisbon', digestTime: '22:00' as const, proactive: DEFAULT_PROACTIVE };

describe('ensureProactiveSchedules under a concurrent purge', () => {
  it('creates the schedule again when it vanished between the create and the update', async () => {
    const { temporal, calls } = fakeTemporal({ existsAtCreate: [true, false, true], updateFails: [true, false] });
    await ensureProactiveSchedules(temporal, { taskQueue: 'q', userId: 'u1', settings, nudgeIntervalMinutes: 30 });
    expect(calls).toEqual(['create digest:u1', 'update digest:u1', 'create digest:u1', 'create nudge:u1', 'update nudge:u1']);
  });

  it('gives up after a bounded number of rounds', async () => {
    const { temporal, calls } = fakeTemporal({ existsAtCreate: [true, true, true, true], updateFails: [true, true, true, true] });
    await expect(ensureProactiveSchedules(temporal, { taskQueue: 'q', userId: 'u1', settings, nudgeIntervalMinutes: 30 })).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect(calls.filter((c) => c.startsWith('update'))).toHaveLength(3);
  });
});
