import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../activities';
import { createProactiveActivities } from '../activities/proactive/proactive';
import { PostgresUserRepository } from '../src/adapters/postgres/user-repository';
import { dismissSignal, reminderWorkflow, reminderWorkflowId, rescheduleUpdate, snoozeSignal, stateQuery } from '../workflows';
import type { ReminderWorkflowInput } from '../workflows/proactive/proactive-inputs';
import { ReminderStatusKey, userSearchAttributes } from '../workflows/shared/search-attributes';
import { createTestContext, type TestContext } from './support/harness';
import { createTimeSkippingEnv } from './support/time-skipping';
import { poll } from './support/poll';

// ReminderWorkflow on the Java time-skipping test server: 30-day timers pass in seconds. The
// activities are the real ones, writing to this file's own PostgreSQL database.
let ctx: TestContext;
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `ts-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  ctx = await createTestContext();
  env = await createTimeSkippingEnv();
  worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { code: inject('workflowBundle') },
    activities: createActivities(ctx.runtime.deps),
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
  await ctx?.close();
});

const HOUR = 3600;
const DAY = 24 * HOUR;

async function start(user: string, over: Partial<ReminderWorkflowInput> & { inSeconds?: number }): Promise<WorkflowHandle<typeof reminderWorkflow>> {
  await new PostgresUserRepository(ctx.runtime.pool).ensure({ userKey: user, tenantId: 'tenant-a', externalId: user });
  const now = await env.currentTimeMs();
  const reminderId = randomUUID();
  const input: ReminderWorkflowInput = {
    userId: user,
    reminderId,
    text: '开会',
    dueAt: new Date(now + (over.inSeconds ?? HOUR) * 1000).toISOString(),
    timeZone: 'Asia/Shanghai',
    source: { via: 'api' },
    ackWindowSeconds: DAY,
    ...over,
  };
  return env.client.workflow.start(reminderWorkflow, {
    taskQueue,
    workflowId: reminderWorkflowId(user, reminderId),
    args: [input],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: userSearchAttributes(user),
  });
}

async function row(user: string, reminderId: string) {
  const { rows } = await ctx.runtime.pool.query('SELECT * FROM reminders WHERE user_id = $1 AND id = $2', [user, reminderId]);
  return rows[0];
}

async function notifications(user: string) {
  const { rows } = await ctx.runtime.pool.query('SELECT * FROM notifications WHERE user_id = $1 ORDER BY seq', [user]);
  return rows;
}

async function historyEvents(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).map((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes?.signalName;
    return signal ? `signal:${signal}` : String(temporal.api.enums.v1.EventType[e.eventType ?? 0]);
  });
}

/** Lets the workflow catch up after a skip or a signal (activities run in real time). */
const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000) => poll(read, ok, ms, 100);

describe('ReminderWorkflow with time skipping', () => {
  it('a reminder 30 days out fires on time, stores the notification, and closes after the ack window', async () => {
    const user = `${ctx.prefix}-30d`;
    const handle = await start(user, { inSeconds: 30 * DAY, ackWindowSeconds: HOUR });
    const input = (await handle.describe()).workflowId;
    const t0 = Date.now();
    const result = await handle.result();
    expect(Date.now() - t0).toBeLessThan(30_000);
    const reminderId = input.split(':').pop()!;
    expect(result.status).toBe('fired');
    expect(result.fireCount).toBe(1);
    // Fired at the due time (workflow clock), not a month of wall time later or earlier.
    expect(Math.abs(new Date(result.firedAt!).getTime() - new Date(result.dueAt).getTime())).toBeLessThan(5_000);
    const stored = await row(user, reminderId);
    expect(stored.status).toBe('fired');
    const [n, ...more] = await notifications(user);
    expect(more).toHaveLength(0);
    expect(n.kind).toBe('reminder');
    expect(n.body).toBe('开会');
    expect(n.reminder_id).toBe(reminderId);
    const events = await historyEvents(handle);
    expect(events.filter((e) => e === 'EVENT_TYPE_TIMER_FIRED')).toHaveLength(2); // due, then the ack window
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(ReminderStatusKey)).toBe('fired');
  });

  it('snooze after firing fires it again later; dismiss then closes it', async () => {
    const user = `${ctx.prefix}-snooze`;
    const handle = await start(user, { inSeconds: HOUR });
    await env.sleep(HOUR * 1000 + 60_000);
    const fired = await until(() => handle.query(stateQuery), (s) => s.status === 'fired');
    expect(fired.fireCount).toBe(1);

    await handle.signal(snoozeSignal, { seconds: 600 });
    const snoozed = await until(() => handle.query(stateQuery), (s) => s.status === 'snoozed');
    expect(new Date(snoozed.snoozedUntil!).getTime() - (await env.currentTimeMs())).toBeLessThanOrEqual(600_000);
    expect((await until(() => row(user, snoozed.reminderId), (r) => r.status === 'snoozed')).status).toBe('snoozed');

    await env.sleep(11 * 60_000);
    const again = await until(() => handle.query(stateQuery), (s) => s.status === 'fired' && s.fireCount === 2);
    expect(again.fireCount).toBe(2);
    expect(await notifications(user)).toHaveLength(2);

    await handle.signal(dismissSignal, {});
    const result = await handle.result();
    expect(result.status).toBe('dismissed');
    expect((await row(user, result.reminderId)).status).toBe('dismissed');
    const events = await historyEvents(handle);
    expect(events).toContain('signal:snoozeSignal');
    expect(events).toContain('signal:dismissSignal');
    expect(events.indexOf('signal:snoozeSignal')).toBeLessThan(events.indexOf('signal:dismissSignal'));
  });

  it('dismiss before firing: nothing fires, ever', async () => {
    const user = `${ctx.prefix}-early`;
    const handle = await start(user, { inSeconds: 2 * DAY });
    await handle.signal(dismissSignal, {});
    const result = await handle.result();
    expect(result.status).toBe('dismissed');
    expect(result.fireCount).toBe(0);
    expect(await notifications(user)).toHaveLength(0);
    expect((await row(user, result.reminderId)).status).toBe('dismissed');
  });

  it('dismiss after firing records both moments', async () => {
    const user = `${ctx.prefix}-late`;
    const handle = await start(user, { inSeconds: 3 * HOUR });
    await env.sleep(4 * HOUR * 1000);
    await until(() => handle.query(stateQuery), (s) => s.status === 'fired');
    await handle.signal(dismissSignal, {});
    const result = await handle.result();
    expect(result.status).toBe('dismissed');
    expect(result.firedAt).toBeDefined();
    expect(new Date(result.dismissedAt!) > new Date(result.firedAt!)).toBe(true);
    const stored = await row(user, result.reminderId);
    expect(stored.fired_at).not.toBeNull();
    expect(stored.dismissed_at).not.toBeNull();
  });

  it('a recurring reminder fires at 08:00 local on each day and continues as new; cancel ends the series', async () => {
    const user = `${ctx.prefix}-daily`;
    const now = await env.currentTimeMs();
    const zone = 'Asia/Shanghai';
    const first = DateTime.fromMillis(now, { zone }).plus({ days: 1 }).set({ hour: 8, minute: 0, second: 0, millisecond: 0 });
    const handle = await start(user, { dueAt: first.toUTC().toISO()!, rrule: 'FREQ=DAILY;BYHOUR=8;BYMINUTE=0', seriesStart: first.toUTC().toISO()!, ackWindowSeconds: HOUR });
    await env.sleep(first.toMillis() - now + 3 * DAY * 1000 + 2 * HOUR * 1000);
    const state = await until(() => handle.query(stateQuery), (s) => s.occurrence >= 5);
    expect(state.occurrence).toBe(5);
    const fired = await until(() => notifications(user), (n) => n.length >= 4);
    expect(fired).toHaveLength(4);
    expect(fired.map((n) => n.data.occurrence)).toEqual([1, 2, 3, 4]);
    for (const [i, n] of fired.entries()) {
      expect(DateTime.fromJSDate(n.created_at, { zone }).toFormat('HH:mm')).toBe('08:00');
      expect(DateTime.fromJSDate(n.created_at, { zone }).toISODate()).toBe(first.plus({ days: i }).toISODate());
    }
    expect((await row(user, state.reminderId)).occurrence).toBe(5);
    // One version count for the whole series: each occurrence's row is newer than the last one's.
    const counted = await until(() => Promise.all([handle.query(stateQuery), row(user, state.reminderId)]), ([s, r]) => s.version === r.version);
    expect(counted[1].version).toBe(counted[0].version);
    expect(counted[0].version).toBeGreaterThanOrEqual(4 * 2); // at least fired + next occurrence, four times

    await handle.cancel();
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect((await until(() => row(user, state.reminderId), (r) => r.status === 'cancelled')).status).toBe('cancelled');
  });

  it('rescheduleUpdate is validated by the workflow and moves the timer', async () => {
    const user = `${ctx.prefix}-move`;
    const handle = await start(user, { inSeconds: 5 * DAY });
    const now = await env.currentTimeMs();
    await expect(handle.executeUpdate(rescheduleUpdate, { args: [{ dueAt: new Date(now - 60_000).toISOString() }] })).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    await expect(handle.executeUpdate(rescheduleUpdate, { args: [{ dueAt: 'not a date' }] })).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    const moved = await handle.executeUpdate(rescheduleUpdate, { args: [{ dueAt: new Date(now + 2 * HOUR * 1000).toISOString() }] });
    expect(moved.status).toBe('scheduled');
    expect(moved.dueAt).toBe(new Date(now + 2 * HOUR * 1000).toISOString());
    await env.sleep(3 * HOUR * 1000);
    const fired = await until(() => handle.query(stateQuery), (s) => s.status === 'fired');
    expect(fired.status).toBe('fired');
    expect(Math.abs(new Date(fired.firedAt!).getTime() - (now + 2 * HOUR * 1000))).toBeLessThan(5_000);
    await handle.signal(dismissSignal, {});
    await handle.result();
  });

  it('the same reminder id cannot start twice, even after it closed', async () => {
    const user = `${ctx.prefix}-dup`;
    const handle = await start(user, { inSeconds: HOUR });
    await handle.signal(dismissSignal, {});
    const result = await handle.result();
    const again = env.client.workflow.start(reminderWorkflow, {
      taskQueue,
      workflowId: handle.workflowId,
      args: [{ userId: user, reminderId: result.reminderId, text: '开会', dueAt: new Date((await env.currentTimeMs()) + HOUR * 1000).toISOString(), timeZone: 'UTC', source: { via: 'api' } }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
    await expect(again).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
  });

  it('snooze and dismiss signalled straight to Temporal back to back (as chat services do) after firing: the row ends dismissed at the workflow’s version', async () => {
    const user = `${ctx.prefix}-b2b`;
    const handle = await start(user, { inSeconds: HOUR });
    await env.sleep(HOUR * 1000 + 60_000);
    const fired = await until(() => handle.query(stateQuery), (s) => s.status === 'fired');
    await until(() => row(user, fired.reminderId), (r) => r.status === 'fired');
    await handle.signal(snoozeSignal, { seconds: 600 });
    await handle.signal(dismissSignal, {});
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'dismissed', snoozeCount: 1, fireCount: 1 });
    const stored = await row(user, result.reminderId);
    expect({ status: stored.status, version: stored.version, snooze_count: stored.snooze_count }).toEqual({ status: 'dismissed', version: result.version, snooze_count: 1 });
    expect((await handle.describe()).typedSearchAttributes.get(ReminderStatusKey)).toBe('dismissed');
  });

  it('a late write of an older state (an activity that timed out or was cancelled but still ran) changes nothing', async () => {
    const user = `${ctx.prefix}-late-write`;
    const handle = await start(user, { inSeconds: 2 * DAY });
    await handle.signal(snoozeSignal, { seconds: 600 });
    const snoozed = await until(() => handle.query(stateQuery), (s) => s.status === 'snoozed');
    await handle.signal(dismissSignal, {});
    const result = await handle.result();
    expect(result.version).toBe(snoozed.version + 1);
    const acts = createProactiveActivities(ctx.runtime.deps);
    const at = new Date(await env.currentTimeMs()).toISOString();
    // The snooze's write arriving after the dismiss's, and a retry of the dismiss's own write.
    expect(await acts.saveReminderState({ userId: user, state: snoozed, at })).toEqual({ applied: false });
    expect(await acts.saveReminderState({ userId: user, state: result, at })).toEqual({ applied: false });
    const stored = await row(user, result.reminderId);
    expect({ status: stored.status, version: stored.version }).toEqual({ status: 'dismissed', version: result.version });
  });
});
