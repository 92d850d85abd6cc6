import { describe, expect, it } from 'vitest';
import { cancel, dismiss, fire, initialState, isClosed, nextWake, reschedule, snooze } from '../../../src/core/proactive/reminder-state';

const T0 = new Date('2026-03-01T09:00:00Z');
const plus = (d: Date, s: number) => new Date(d.getTime() + s * 1000);

describe('reminder state machine', () => {
  it('waits for the due time, then for the user’s answer within the ack window', () => {
    const s = initialState('r1', plus(T0, 3600));
    expect(nextWake(s, 600)).toEqual({ at: plus(T0, 3600), reason: 'due' });
    const fired = fire(s, plus(T0, 3600));
    expect(fired.status).toBe('fired');
    expect(fired.fireCount).toBe(1);
    expect(nextWake(fired, 600)).toEqual({ at: plus(T0, 4200), reason: 'ack-window-over' });
    // A recurring reminder's next occurrence cuts the window short.
    expect(nextWake(fired, 600, plus(T0, 3900))).toEqual({ at: plus(T0, 3900), reason: 'ack-window-over' });
  });

  it('snooze moves the next firing to now + seconds, before or after firing', () => {
    const before = snooze(initialState('r1', plus(T0, 3600)), 600, T0);
    expect(before.status).toBe('snoozed');
    expect(nextWake(before, 60)).toEqual({ at: plus(T0, 600), reason: 'snooze-over' });
    const after = snooze(fire(initialState('r1', T0), T0), 3600, plus(T0, 5));
    expect(after.snoozedUntil).toBe(plus(T0, 3605).toISOString());
    const again = fire(after, plus(T0, 3605));
    expect(again.fireCount).toBe(2);
    expect(again.snoozedUntil).toBeUndefined();
  });

  it('dismiss and cancel close the occurrence for good', () => {
    const dismissed = dismiss(initialState('r1', plus(T0, 60)), T0);
    expect(isClosed(dismissed)).toBe(true);
    expect(nextWake(dismissed, 60)).toBeUndefined();
    expect(snooze(dismissed, 600, T0)).toBe(dismissed);
    expect(fire(dismissed, T0)).toBe(dismissed);
    const cancelled = cancel(fire(initialState('r1', T0), T0), plus(T0, 1));
    expect(cancelled.status).toBe('cancelled');
    expect(reschedule(cancelled, plus(T0, 99))).toBe(cancelled);
  });

  it('reschedule makes a fired or snoozed reminder scheduled again at the new time', () => {
    const r = reschedule(snooze(fire(initialState('r1', T0), T0), 60, T0), plus(T0, 7200));
    expect(r.status).toBe('scheduled');
    expect(r.dueAt).toBe(plus(T0, 7200).toISOString());
    expect(r.snoozedUntil).toBeUndefined();
  });

  it('clamps absurd snoozes to 30 days', () => {
    const s = snooze(initialState('r1', T0), 10 ** 9, T0);
    expect(new Date(s.snoozedUntil!).getTime() - T0.getTime()).toBe(30 * 86400 * 1000);
  });

  it('counts snoozes; transitions keep the version (the workflow bumps it once per change)', () => {
    const s = initialState('r1', T0, 3, 7);
    expect(s).toMatchObject({ occurrence: 3, version: 7, snoozeCount: 0, fireCount: 0 });
    const twice = snooze(snooze(fire(s, T0), 60, T0), 60, plus(T0, 60));
    expect(twice.snoozeCount).toBe(2);
    expect(twice.version).toBe(7);
    expect(dismiss(twice, T0).snoozeCount).toBe(2);
    expect(snooze(dismiss(twice, T0), 60, T0).snoozeCount).toBe(2);
  });
});

