import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ErrorCode } from '../../src/core/errors';
import { dismiss, fire, initialState } from '../../src/core/proactive/reminder-state';
import { fireReminder, recordReminder, saveReminderState } from '../../src/proactive/reminder-rows';
import { createReminder, getReminder, listReminders, resolveDue } from '../../src/proactive/reminders';
import { InMemoryConversationSide } from '../support/conversation-fakes';

const user = 'tenant-a:USER';
const other = 'tenant-a:OTHER';
const at = new Date('2026-06-10T08:00:00Z');
const due = new Date('2026-06-10T09:00:00Z');
const config = loadConfig({ NODE_ENV: 'test' });

function side() {
  const fakes = new InMemoryConversationSide();
  for (const u of [user, other]) void fakes.users.ensure({ userKey: u, tenantId: 'tenant-a', externalId: u });
  return fakes;
}

const workflowInput = (over: Partial<Parameters<typeof recordReminder>[1]> = {}) => ({
  userId: user,
  reminderId: 'r1',
  text: '提醒我开会',
  dueAt: due.toISOString(),
  timeZone: 'Asia/Shanghai',
  source: { via: 'conversation' as const, conversationId: 'c1', messageId: 'm1' },
  at,
  ...over,
});

const code = (p: Promise<unknown>) => p.then(() => 'resolved', (err: { code?: string }) => err.code);

describe('reminder rows as the workflow writes them', () => {
  it('creates the row once and announces it on commit; a re-run finds it', async () => {
    const f = side();
    expect(await recordReminder(f.deps, workflowInput())).toEqual({ created: true, version: 0 });
    expect(f.announced).toEqual([{ type: 'reminder', userId: user, reminderId: 'r1', status: 'scheduled' }]);
    expect(await recordReminder(f.deps, workflowInput())).toEqual({ created: false, version: 0 });
    expect((await getReminder(f.deps, { userId: user, id: 'r1' })).workflowId).toBe(`reminder:${user}:r1`);
  });

  it('tells a re-run of a dismissed occurrence that it closed before, without announcing', async () => {
    const f = side();
    await recordReminder(f.deps, workflowInput());
    const closed = { ...dismiss(fire(initialState('r1', due), at), at), version: 2 };
    expect(await saveReminderState(f.deps, { userId: user, state: closed, at })).toEqual({ applied: true });
    f.announced = [];
    const again = await recordReminder(f.deps, workflowInput());
    expect(again.closedBefore?.status).toBe('dismissed');
    expect(again.version).toBe(2);
    expect(f.announced).toEqual([]);
  });

  it("moves a series' row on to the next occurrence once, one version above the previous run's", async () => {
    const f = side();
    await recordReminder(f.deps, workflowInput());
    await saveReminderState(f.deps, { userId: user, state: { ...fire(initialState('r1', due), at), version: 3 }, at });
    const next = new Date(due.getTime() + 86_400_000);
    expect(await recordReminder(f.deps, workflowInput({ dueAt: next.toISOString(), occurrence: 2, version: 3 }))).toEqual({ created: false, version: 4 });
    const row = await getReminder(f.deps, { userId: user, id: 'r1' });
    expect({ occurrence: row.occurrence, status: row.status, fireCount: row.fireCount, dueAt: row.dueAt }).toEqual({ occurrence: 2, status: 'scheduled', fireCount: 0, dueAt: next });
    // The same next run again (a retried activity): nothing moves.
    expect((await recordReminder(f.deps, workflowInput({ dueAt: next.toISOString(), occurrence: 2, version: 3 }))).version).toBe(4);
  });

  it('ignores a state older than the row (a late write) and announces nothing for it', async () => {
    const f = side();
    await recordReminder(f.deps, workflowInput());
    const fired = { ...fire(initialState('r1', due), at), version: 2 };
    expect(await saveReminderState(f.deps, { userId: user, state: fired, at })).toEqual({ applied: true });
    f.announced = [];
    expect(await saveReminderState(f.deps, { userId: user, state: { ...initialState('r1', due), version: 1 }, at })).toEqual({ applied: false });
    expect(f.announced).toEqual([]);
    expect((await getReminder(f.deps, { userId: user, id: 'r1' })).status).toBe('fired');
  });

  it('stores one notification per firing, in the reminder text language, and announces both changes', async () => {
    const f = side();
    await recordReminder(f.deps, workflowInput());
    f.announced = [];
    const state = { ...fire(initialState('r1', due), at), version: 1 };
    const input = { userId: user, text: '提醒我开会', timeZone: 'Asia/Shanghai', assumedTime: false, state, at };
    const first = await fireReminder(f.deps, input);
    expect(f.announced.map((e) => e.type)).toEqual(['notification', 'reminder']);
    f.announced = [];
    // A retried activity: the same notification, nothing announced again.
    expect(await fireReminder(f.deps, input)).toEqual(first);
    expect(f.announced).toEqual([]);
    const [n] = await f.notifications.list({ userId: user, limit: 10 });
    expect(n).toMatchObject({ id: first.notificationId, kind: 'reminder', title: '⏰ 提醒', body: '提醒我开会', reminderId: 'r1' });
    expect(n!.data).toMatchObject({ occurrence: 1, fireCount: 1, timeZone: 'Asia/Shanghai' });
  });

  it('rolls the whole write back when a step fails: no row, no announcement', async () => {
    const f = side();
    f.notifications.announce = () => Promise.reject(new Error('connection lost'));
    await expect(recordReminder(f.deps, workflowInput())).rejects.toThrow('connection lost');
    expect(f.announced).toEqual([]);
    expect(await code(getReminder(f.deps, { userId: user, id: 'r1' }))).toBe(ErrorCode.notFound);
  });
});

describe('reminders through the API', () => {
  it('reads only the asking user’s reminders', async () => {
    const f = side();
    await recordReminder(f.deps, workflowInput());
    expect(await listReminders(f.deps, { userId: user, limit: 10 })).toHaveLength(1);
    expect(await listReminders(f.deps, { userId: other, limit: 10 })).toEqual([]);
    expect(await code(getReminder(f.deps, { userId: other, id: 'r1' }))).toBe(ErrorCode.notFound);
  });

  it('reads a due time without offset in the user’s stored zone, and refuses an unknown zone', async () => {
    const f = side();
    await f.settings.update({ userId: user, timezone: 'Asia/Shanghai' });
    const now = new Date('2026-06-01T00:00:00Z');
    const resolved = await resolveDue(f.deps, { userId: user, text: 'x', dueAt: '2026-06-02T15:00' }, now);
    expect(resolved).toEqual({ timeZone: 'Asia/Shanghai', dueAt: new Date('2026-06-02T07:00:00Z'), requested: new Date('2026-06-02T07:00:00Z') });
    // Another user, no zone set: UTC.
    expect((await resolveDue(f.deps, { userId: other, text: 'x', dueAt: '2026-06-02T15:00' }, now)).dueAt).toEqual(new Date('2026-06-02T15:00:00Z'));
    expect(await code(resolveDue(f.deps, { userId: user, text: 'x', dueAt: '2026-06-02T15:00', timezone: 'Mars/Base' }, now))).toBe(ErrorCode.validationFailed);
    expect(await code(resolveDue(f.deps, { userId: user, text: 'x', dueAt: '2026-05-02T15:00' }, now))).toBe(ErrorCode.validationFailed);
  });

  /** A Temporal client that answers the create's first call and fails the start with `startError`. */
  function temporalFailingStart(startError: Error): Client {
    const connection = { withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn(), workflowService: { getSystemInfo: async () => ({}) } };
    return { connection, workflow: { start: () => Promise.reject(startError) } } as unknown as Client;
  }

  /** An error as the client throws it for a gRPC status (details and metadata on the cause). */
  function grpcFailure(code: number): Error {
    return new Error('Failed to start Workflow', { cause: Object.assign(new Error(`status ${code}`), { code, details: `status ${code}`, metadata: {} }) });
  }

  it('removes the row again when the start fails before it was sent or is refused: no reminder that never fires', async () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const req = { userId: user, text: 'call mum', dueAt: '2026-06-02T15:00:00Z' };
    for (const failure of [new Error('payload could not be encoded'), grpcFailure(3)]) {
      const f = side();
      expect(await code(createReminder({ ...f.deps, temporal: temporalFailingStart(failure), taskQueue: 'q', config }, req, now))).toBe(ErrorCode.workflowUnavailable);
      expect(await listReminders(f.deps, { userId: user, limit: 10 })).toEqual([]);
    }
  });

  it('keeps the row and answers pending when the start went out without an answer: it may still land', async () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const req = { userId: user, text: 'call mum', dueAt: '2026-06-02T15:00:00Z' };
    for (const unanswered of [4, 14]) {
      const f = side();
      const result = await createReminder({ ...f.deps, temporal: temporalFailingStart(grpcFailure(unanswered)), taskQueue: 'q', config }, req, now);
      expect(result).toMatchObject({ created: true, pending: true });
      expect(await listReminders(f.deps, { userId: user, limit: 10 })).toHaveLength(1);
    }
  });

  it('answers 503 and stores nothing when Temporal does not answer before the row is written', async () => {
    const f = side();
    let starts = 0;
    const connection = { withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn(), workflowService: { getSystemInfo: () => Promise.reject(grpcFailure(4)) } };
    const temporal = { connection, workflow: { start: async () => void starts++ } } as unknown as Client;
    const req = { userId: user, text: 'call mum', dueAt: '2026-06-02T15:00:00Z' };
    expect(await code(createReminder({ ...f.deps, temporal, taskQueue: 'q', config }, req, new Date('2026-06-01T00:00:00Z')))).toBe(ErrorCode.workflowUnavailable);
    expect(starts).toBe(0);
    expect(await listReminders(f.deps, { userId: user, limit: 10 })).toEqual([]);
  });
});
