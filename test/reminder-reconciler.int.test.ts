import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresUserRepository } from '../src/adapters/postgres/user-repository';
import type { ReminderRecord } from '../src/core/ports/proactive';
import { reconcileReminders } from '../src/proactive/reminder-reconciler';
import { reminderReconcilerScheduleId } from '../src/lifecycle/reliability-schedules';
import { reminderWorkflowId } from '../workflows';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// The reminder reconciler: a reminder row committed by the API whose workflow never started (the
// process died between the two and the client did not retry) is started by the next pass, fires
// exactly once, and a second pass starts nothing.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const GRACE = 60;
const deps = () => ({ reminders: ctx.runtime.deps.reminders, temporal: ctx.runtime.temporal, taskQueue: ctx.taskQueue, config: ctx.runtime.config });
const pass = (graceSeconds = GRACE) => reconcileReminders(deps(), { limit: 100, graceSeconds });

/** The row as the crash leaves it: inserted the way the API inserts it, no workflow started. */
async function crashedRow(name: string, opts: { dueInMs: number; createdAgoMs: number; workflowId?: string }): Promise<ReminderRecord> {
  const user = ctx.userKey(name);
  await new PostgresUserRepository(ctx.runtime.pool).ensure({ userKey: user, tenantId: 'tenant-a', externalId: name });
  const id = randomUUID();
  const { reminder } = await ctx.runtime.deps.reminders.insert({
    reminder: {
      id,
      userId: user,
      text: `call ${name}`,
      dueAt: new Date(Date.now() + opts.dueInMs),
      timeZone: 'UTC',
      rrule: null,
      seriesStart: null,
      assumedTime: false,
      source: { via: 'api' },
      workflowId: opts.workflowId ?? reminderWorkflowId(user, id),
    },
    at: new Date(Date.now() - opts.createdAgoMs),
  });
  return reminder;
}

async function firings(r: ReminderRecord): Promise<number> {
  const { rows } = await ctx.runtime.pool.query('SELECT count(*)::int AS n FROM notifications WHERE user_id = $1 AND reminder_id = $2', [r.userId, r.id]);
  return rows[0].n as number;
}

async function exists(workflowId: string): Promise<boolean> {
  try {
    await ctx.runtime.temporal.workflow.getHandle(workflowId).describe();
    return true;
  } catch {
    return false;
  }
}

describe('reminder reconciler', () => {
  it('starts the workflow of a committed row that never got one; it fires exactly once; a second pass starts nothing', async () => {
    const future = await crashedRow('rr-future', { dueInMs: 4000, createdAgoMs: 120_000 });
    const overdue = await crashedRow('rr-overdue', { dueInMs: -30_000, createdAgoMs: 180_000 });
    // Younger than the grace period: a start may still be in flight; the pass leaves it alone.
    const fresh = await crashedRow('rr-fresh', { dueInMs: 600_000, createdAgoMs: 0 });
    expect(await exists(future.workflowId)).toBe(false);

    const first = await pass();
    expect(first).toEqual({ found: 2, started: 2, existed: 0, failed: 0 });
    expect(await exists(future.workflowId)).toBe(true);
    expect(await exists(overdue.workflowId)).toBe(true);
    expect(await exists(fresh.workflowId)).toBe(false);
    // Each workflow is the row's own user's: its id and search attributes carry that user.
    const described = await ctx.runtime.temporal.workflow.getHandle(future.workflowId).describe();
    expect(described.workflowId).toBe(reminderWorkflowId(future.userId, future.id));

    // The overdue one fires promptly, the other on its due time; each once.
    expect(await poll(() => firings(overdue), (n) => n >= 1, 15_000)).toBe(1);
    expect(await poll(() => firings(future), (n) => n >= 1, 20_000)).toBe(1);
    const row = await ctx.runtime.deps.reminders.get({ userId: future.userId, id: future.id });
    expect(row?.status).toBe('fired');

    const second = await pass();
    expect(second).toEqual({ found: 0, started: 0, existed: 0, failed: 0 });
    // Even a row whose mark was lost is only marked: the workflow id is never started twice.
    await ctx.runtime.pool.query("UPDATE reminders SET workflow_started_at = NULL, status = 'scheduled' WHERE user_id = $1 AND id = $2", [overdue.userId, overdue.id]);
    const third = await pass();
    expect(third).toEqual({ found: 1, started: 0, existed: 1, failed: 0 });
    await new Promise((r) => setTimeout(r, 1500));
    expect(await firings(overdue)).toBe(1);
    expect(await firings(future)).toBe(1);

    // With no grace the fresh row is due for a start too, exactly once.
    expect(await pass(0)).toEqual({ found: 1, started: 1, existed: 0, failed: 0 });
    expect(await pass(0)).toEqual({ found: 0, started: 0, existed: 0, failed: 0 });
  });

  it('a reminder created through the API is marked by its workflow and never touched by the reconciler', async () => {
    const user = ctx.userKey('rr-api');
    const res = await ctx.call('POST', `/v1/users/rr-api/reminders`, { text: 'water the plants', dueAt: new Date(Date.now() + 3_600_000).toISOString(), timezone: 'UTC' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.id as string;
    const marked = await poll(
      async () => (await ctx.runtime.pool.query('SELECT workflow_started_at FROM reminders WHERE user_id = $1 AND id = $2', [user, id])).rows[0]?.workflow_started_at,
      (v) => v != null,
    );
    expect(marked).not.toBeNull();
    expect(await pass(0)).toEqual({ found: 0, started: 0, existed: 0, failed: 0 });
  });

  it('the schedule exists at worker start with the configured interval', async () => {
    await ctx.runtime.ensureSchedules({ taskQueue: ctx.taskQueue });
    const d = await ctx.runtime.temporal.schedule.getHandle(reminderReconcilerScheduleId(ctx.taskQueue)).describe();
    expect(d.spec.intervals?.[0]?.every).toBe(ctx.runtime.config.reliability.reminderReconcileSeconds * 1000);
    expect(d.action.type === 'startWorkflow' && d.action.workflowType).toBe('reminderReconcilerWorkflow');
  });

  it('a row whose start always fails goes behind the others instead of blocking every batch', async () => {
    // Temporal refuses a workflow id over its length limit: a failure of the row itself, not an outage.
    const refused = await crashedRow('rr-refused', { dueInMs: 600_000, createdAgoMs: 600_000, workflowId: `reminder:${'x'.repeat(1200)}` });
    const younger = await crashedRow('rr-younger', { dueInMs: 600_000, createdAgoMs: 300_000 });
    const one = () => reconcileReminders(deps(), { limit: 1, graceSeconds: GRACE });
    expect(await one()).toEqual({ found: 1, started: 0, existed: 0, failed: 1 });
    const { rows } = await ctx.runtime.pool.query('SELECT workflow_start_failures, workflow_start_error FROM reminders WHERE user_id = $1 AND id = $2', [refused.userId, refused.id]);
    expect(rows[0].workflow_start_failures).toBe(1);
    expect(rows[0].workflow_start_error).toMatch(/\S/);
    // The next pass of one takes the row never tried, although it is younger.
    expect(await one()).toEqual({ found: 1, started: 1, existed: 0, failed: 0 });
    expect(await exists(younger.workflowId)).toBe(true);
    // The failing row is still retried (it may be fixable), and counted each time.
    expect(await one()).toEqual({ found: 1, started: 0, existed: 0, failed: 1 });
    const again = await ctx.runtime.pool.query('SELECT workflow_start_failures FROM reminders WHERE user_id = $1 AND id = $2', [refused.userId, refused.id]);
    expect(again.rows[0].workflow_start_failures).toBe(2);
    await ctx.runtime.pool.query("UPDATE reminders SET status = 'dismissed' WHERE user_id = $1 AND id = $2", [refused.userId, refused.id]);
  });
});

// A reminder answered `pending` (its start sent into a Temporal that did not answer) may have no
// workflow when the user answers it. The answer starts the row's workflow and then applies, instead
// of a 409 for an open reminder; a row whose workflow was seen to start is never started again.
describe('answers to a reminder whose workflow never started', () => {
  const url = (name: string, id: string, tail = '') => `/v1/users/${name}/reminders/${id}${tail}`;
  const status = async (r: ReminderRecord) => (await ctx.runtime.deps.reminders.get({ userId: r.userId, id: r.id }))?.status;

  it('snooze, dismiss, cancel and reschedule start the workflow and apply', async () => {
    const snoozed = await crashedRow('ru-snooze', { dueInMs: 600_000, createdAgoMs: 0 });
    const res = await ctx.call('POST', url('ru-snooze', snoozed.id, '/snooze'), { seconds: 900 });
    expect([200, 202], JSON.stringify(res.body)).toContain(res.status);
    expect(await exists(snoozed.workflowId)).toBe(true);
    expect(await poll(() => status(snoozed), (s) => s === 'snoozed')).toBe('snoozed');

    const cancelled = await crashedRow('ru-cancel', { dueInMs: 600_000, createdAgoMs: 0 });
    const del = await ctx.call('DELETE', url('ru-cancel', cancelled.id));
    expect([200, 202], JSON.stringify(del.body)).toContain(del.status);
    expect(await poll(() => status(cancelled), (s) => s === 'cancelled')).toBe('cancelled');

    const dismissed = await crashedRow('ru-dismiss', { dueInMs: 600_000, createdAgoMs: 0 });
    const dis = await ctx.call('POST', url('ru-dismiss', dismissed.id, '/dismiss'));
    expect([200, 202], JSON.stringify(dis.body)).toContain(dis.status);
    expect(await exists(dismissed.workflowId)).toBe(true);

    const moved = await crashedRow('ru-move', { dueInMs: 600_000, createdAgoMs: 0 });
    const dueAt = new Date(Date.now() + 7_200_000).toISOString();
    const patch = await ctx.call('PATCH', url('ru-move', moved.id), { dueAt });
    expect([200, 202], JSON.stringify(patch.body)).toContain(patch.status);
    expect(await poll(async () => (await ctx.runtime.deps.reminders.get({ userId: moved.userId, id: moved.id }))?.dueAt.toISOString(), (d) => d === dueAt)).toBe(dueAt);

    // Each start was recorded, so the reconciler finds none of them, and each workflow ran once.
    expect((await pass(0)).found).toBe(0);
    for (const r of [snoozed, cancelled, dismissed, moved]) {
      expect(await ctx.runtime.deps.reminders.neverStarted({ userId: r.userId, id: r.id })).toBe(false);
    }
  });

  it('a row whose workflow was seen to start and is gone stays 409: nothing fires it a second time', async () => {
    const gone = await crashedRow('ru-gone', { dueInMs: 600_000, createdAgoMs: 0 });
    await ctx.runtime.deps.reminders.markWorkflowStarted({ userId: gone.userId, id: gone.id, at: new Date() });
    const res = await ctx.call('POST', url('ru-gone', gone.id, '/snooze'), { seconds: 900 });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.error.code).toBe('invalid_state');
    expect(await exists(gone.workflowId)).toBe(false);
  });
});
