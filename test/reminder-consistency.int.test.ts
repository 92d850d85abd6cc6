import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../activities';
import { PostgresUserRepository } from '../src/adapters/postgres/user-repository';
import { dismissSignal, reminderWorkflow, reminderWorkflowId, snoozeSignal, stateQuery } from '../workflows';
import type { ReminderState } from '../src/core/proactive/reminder-state';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';
import { mulberry32 } from './support/prng';

// Issue #14 item 1: reminder state has one writer (the ReminderWorkflow) and no lost update.
// Random sequences of snooze / dismiss / reschedule / cancel with random gaps go through the API
// against the real stack, for several users at once; after quiescence the workflow's own state
// (stateQuery) and the listed state (GET /v1/users/{u}/reminders) must be the same, version
// included. A failure names its REMINDER_PROPERTY_SEED and sequence; set it to replay the same draws.

let ctx: TestContext;
beforeAll(async () => {
  // The production wait for the workflow to accept an answer (5 s) is a latency budget; on a
  // loaded CI machine 20 parallel answers can miss it and get an honest 503. These properties are
  // about the state the answers leave, so the test gives the workflow longer to accept.
  ctx = await createTestContext({ REMINDER_ACCEPT_TIMEOUT_MS: '20000' });
});
afterAll(async () => {
  await ctx?.close();
});

const SEED = Number(process.env.REMINDER_PROPERTY_SEED ?? 1414);
const USERS = 5;
const SEQUENCES_PER_USER = 6;

type Op = { kind: 'snooze'; seconds: number } | { kind: 'dismiss' } | { kind: 'reschedule'; dueAt: string } | { kind: 'cancel' };
/** sequential: each answer awaited, then a gap; overlapping: sent after the gap without awaiting the previous; firing: sequential while the reminder comes due. */
type Mode = 'sequential' | 'overlapping' | 'firing';

interface Model {
  status: ReminderState['status'];
  snoozeCount: number;
  dueAt: string;
}

interface Run {
  label: string;
  user: string;
  id: string;
  workflowId: string;
  mode: Mode;
  ops: Op[];
  codes: number[];
  model?: Model;
  dueBy: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number) => new Date(Math.round(ms / 1000) * 1000).toISOString();
const closed = (s: Model['status']) => s === 'dismissed' || s === 'cancelled';

function draw(rand: () => number): Op {
  const r = rand();
  if (r < 0.4) return { kind: 'snooze', seconds: 60 + Math.floor(rand() * 3540) };
  if (r < 0.6) return { kind: 'dismiss' };
  if (r < 0.85) return { kind: 'reschedule', dueAt: iso(Date.now() + (600 + Math.floor(rand() * 86_000)) * 1000) };
  return { kind: 'cancel' };
}

async function send(user: string, id: string, op: Op): Promise<{ status: number; body: any }> {
  const path = `/v1/users/${user}/reminders/${id}`;
  switch (op.kind) {
    case 'snooze':
      return ctx.call('POST', `${path}/snooze`, { seconds: op.seconds });
    case 'dismiss':
      return ctx.call('POST', `${path}/dismiss`, {});
    case 'reschedule':
      return ctx.call('PATCH', path, { dueAt: op.dueAt });
    case 'cancel':
      return ctx.call('DELETE', path);
  }
}

const stateOf = (workflowId: string) => ctx.runtime.temporal.workflow.getHandle(workflowId).query(stateQuery);
const getOne = async (user: string, id: string) => (await ctx.call('GET', `/v1/users/${user}/reminders/${id}`)).body;

/** Codes an answer may get in sequential mode, given the model before it (202: the list lagged; then we wait for it). */
function expectedCodes(model: Model, op: Op): number[] {
  if (!closed(model.status)) return [200, 202];
  // Closed: refused by the row check (409), or by the workflow's validator for a reschedule (400).
  return op.kind === 'reschedule' ? [409, 400] : [409];
}

function apply(model: Model, op: Op): Model {
  if (closed(model.status)) return model;
  switch (op.kind) {
    case 'snooze':
      return { ...model, status: 'snoozed', snoozeCount: model.snoozeCount + 1 };
    case 'dismiss':
      return { ...model, status: 'dismissed' };
    case 'reschedule':
      return { ...model, status: 'scheduled', dueAt: op.dueAt };
    case 'cancel':
      return { ...model, status: 'cancelled' };
  }
}

async function runSequence(user: string, n: number): Promise<Run> {
  const seed = SEED * 1000 + n;
  const rand = mulberry32(seed);
  const mode: Mode = rand() < 0.35 ? 'overlapping' : rand() < 0.4 ? 'firing' : 'sequential';
  const dueIn = mode === 'firing' ? 800 + Math.floor(rand() * 1500) : (3600 + Math.floor(rand() * 3600)) * 1000;
  const dueAt = iso(Date.now() + dueIn);
  const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: `r${n}`, dueAt });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const ops = Array.from({ length: 2 + Math.floor(rand() * 6) }, () => draw(rand));
  const run: Run = { label: `REMINDER_PROPERTY_SEED=${SEED} sequence ${n} (${mode}: ${ops.map((o) => o.kind).join(' → ')})`, user, id: created.body.id, workflowId: created.body.workflowId, mode, ops, codes: [], dueBy: Date.now() + dueIn };
  if (mode === 'overlapping') {
    const pending: Promise<void>[] = [];
    for (const [i, op] of ops.entries()) {
      pending.push(send(user, run.id, op).then((r) => void (run.codes[i] = r.status)));
      await sleep(Math.floor(rand() * 51));
    }
    await Promise.all(pending);
    for (const code of run.codes) expect([200, 202, 400, 409], `${run.label}: codes ${run.codes}`).toContain(code);
    return run;
  }
  let model: Model = { status: 'scheduled', snoozeCount: 0, dueAt };
  for (const op of ops) {
    const res = await send(user, run.id, op);
    run.codes.push(res.status);
    if (mode === 'sequential') {
      expect(expectedCodes(model, op), `${run.label}: ${op.kind} on ${model.status} → ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
      model = apply(model, op);
      if (res.status === 200) {
        // Read-your-writes: right after a 200, the reminder reads as the workflow left it.
        const now = await getOne(user, run.id);
        const answered = op.kind === 'reschedule' ? res.body.version : res.body.reminder.version;
        expect(now.version, run.label).toBeGreaterThanOrEqual(answered);
        expect({ status: now.status, snoozeCount: now.snoozeCount, dueAt: now.dueAt }, `${run.label}: after ${op.kind}`).toEqual(model);
      } else if (res.status === 202) {
        await quiesce(run);
      }
    } else {
      expect([200, 202, 400, 409], `${run.label}: ${op.kind} → ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
    }
    await sleep(Math.floor(rand() * 51));
  }
  if (mode === 'sequential') run.model = model;
  return run;
}

/** Until the workflow's version is the row's (its activities done), and nothing is about to fire. */
async function quiesce(run: Run): Promise<{ state: ReminderState; listed: any }> {
  const wait = run.dueBy + 1500 - Date.now();
  if (run.mode === 'firing' && wait > 0) await sleep(wait);
  let last: { state: ReminderState; listed: any } | undefined;
  await poll(
    async () => {
      const state = await stateOf(run.workflowId);
      const { reminders } = (await ctx.call('GET', `/v1/users/${run.user}/reminders?limit=100`)).body;
      last = { state, listed: reminders.find((r: { id: string }) => r.id === run.id) };
      return last;
    },
    (v) => v.listed?.version === v.state.version,
    20_000,
    100,
  );
  return last!;
}

describe('reminder state: the workflow is the one writer, and the list follows every change in order', () => {
  it(`${USERS * SEQUENCES_PER_USER} random answer sequences for ${USERS} users in parallel end with the list equal to the workflow's state`, async () => {
    const users = Array.from({ length: USERS }, (_, u) => `${ctx.prefix}-p${u}`);
    const runs = (await Promise.all(users.map(async (user, u) => {
      const mine: Run[] = [];
      for (let k = 0; k < SEQUENCES_PER_USER; k++) mine.push(await runSequence(user, u * SEQUENCES_PER_USER + k));
      return mine;
    }))).flat();

    expect(new Set(runs.map((r) => r.mode))).toEqual(new Set(['sequential', 'overlapping', 'firing']));
    for (const run of runs) {
      const { state, listed } = await quiesce(run);
      const shown = {
        status: listed.status,
        dueAt: listed.dueAt,
        occurrence: listed.occurrence,
        snoozeCount: listed.snoozeCount,
        fireCount: listed.fireCount,
        version: listed.version,
        snoozedUntil: listed.snoozedUntil,
      };
      const held = {
        status: state.status,
        dueAt: state.dueAt,
        occurrence: state.occurrence,
        snoozeCount: state.snoozeCount,
        fireCount: state.fireCount,
        version: state.version,
        snoozedUntil: state.status === 'snoozed' ? state.snoozedUntil : undefined,
      };
      expect(shown, `${run.label}; codes ${run.codes}`).toEqual(held);
      if (run.model) expect({ status: state.status, snoozeCount: state.snoozeCount, dueAt: state.dueAt }, run.label).toEqual(run.model);
    }
    const answered = runs.flatMap((r) => r.codes);
    // Most answers settle within the wait; 202 only when the machine is too slow for it.
    expect(answered.filter((c) => c === 202).length, `codes ${answered}`).toBeLessThanOrEqual(Math.ceil(answered.length / 10));
  });

  it('snooze then dismiss sent back to back without waiting for either answer (the lost update of #14): the list ends dismissed', async () => {
    for (const fired of [false, true]) {
      const user = `${ctx.prefix}-b2b-${fired}`;
      const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: '开会', dueAt: iso(Date.now() + (fired ? 1000 : 3_600_000)) });
      const id = created.body.id as string;
      if (fired) await poll(() => getOne(user, id), (r) => r.status === 'fired');
      const [snoozed, dismissed] = await Promise.all([
        ctx.call('POST', `/v1/users/${user}/reminders/${id}/snooze`, { seconds: 600 }),
        sleep(5).then(() => ctx.call('POST', `/v1/users/${user}/reminders/${id}/dismiss`, {})),
      ]);
      expect([200, 409]).toContain(snoozed.status); // 409: the dismiss was handled first
      expect(dismissed.status, JSON.stringify(dismissed.body)).toBe(200);
      expect(dismissed.body.reminder.status).toBe('dismissed');
      const result = await ctx.runtime.temporal.workflow.getHandle(created.body.workflowId).result();
      expect(result.status).toBe('dismissed');
      const listed = (await ctx.call('GET', `/v1/users/${user}/reminders`)).body.reminders[0];
      expect({ status: listed.status, version: listed.version }).toEqual({ status: 'dismissed', version: result.version });
    }
  });

  it('answers 202 with the workflow id when the list cannot follow in time (no worker), and the change still lands', async () => {
    const user = `${ctx.prefix}-slow`;
    const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: 'stretch', dueAt: iso(Date.now() + 3_600_000) });
    await poll(() => stateOf(created.body.workflowId).catch(() => undefined), (s) => s !== undefined);
    await ctx.stopWorker();
    try {
      const t0 = Date.now();
      const res = await ctx.call('POST', `/v1/users/${user}/reminders/${created.body.id}/snooze`, { seconds: 600 });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body).toEqual({ id: created.body.id, accepted: true, action: 'snooze', workflowId: created.body.workflowId });
      expect(Date.now() - t0).toBeLessThan(ctx.runtime.deps.config.proactive.reminderAcceptTimeoutMs + 3000);
    } finally {
      await ctx.startWorker();
    }
    const listed = await poll(() => getOne(user, created.body.id), (r) => r.status === 'snoozed');
    expect({ status: listed.status, snoozeCount: listed.snoozeCount, version: listed.version }).toEqual({ status: 'snoozed', snoozeCount: 1, version: 1 });
  });

  it('signals handled in the same workflow task as the due timer win over it: a reminder dismissed at its due time never fires', async () => {
    // A worker without a workflow cache (no sticky queue), stopped while the timer fires and both
    // signals arrive, so that the next workflow task carries all three.
    const user = `${ctx.prefix}-together`;
    const queue = `${ctx.taskQueue}-together`;
    const connection = await NativeConnection.connect({ address: inject('stack').temporalAddress });
    const runWorker = async () => {
      const worker = await Worker.create({
        connection,
        namespace: ctx.runtime.temporal.options.namespace,
        taskQueue: queue,
        workflowBundle: { code: inject('workflowBundle') },
        // The client encrypts payloads: this worker must read them as the service's own does.
        dataConverter: ctx.runtime.dataConverter,
        activities: createActivities(ctx.runtime.deps),
        maxCachedWorkflows: 0,
      });
      const running = worker.run();
      return async () => {
        worker.shutdown();
        await running;
      };
    };
    try {
      const key = ctx.userKey(user);
      await new PostgresUserRepository(ctx.runtime.pool).ensure({ userKey: key, tenantId: 'tenant-a', externalId: user });
      const reminderId = randomUUID();
      // Far enough ahead that the worker has certainly stopped before the timer fires, even when
      // a loaded machine makes its shutdown take seconds (else it handles the timer on its own).
      const dueAt = Date.now() + 12_000;
      const stop = await runWorker();
      const handle = await ctx.runtime.temporal.workflow.start(reminderWorkflow, {
        taskQueue: queue,
        workflowId: reminderWorkflowId(key, reminderId),
        args: [{ userId: key, reminderId, text: '开会', dueAt: new Date(dueAt).toISOString(), timeZone: 'UTC', source: { via: 'api' } }],
      });
      const kinds = async () => ((await handle.fetchHistory()).events ?? []).map((e) => e.eventType);
      await poll(kinds, (k) => k.includes(temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED), 20_000, 50);
      await stop();
      await poll(kinds, (k) => k.includes(temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_FIRED), 20_000, 100);
      await handle.signal(snoozeSignal, { seconds: 600 });
      await handle.signal(dismissSignal, {});
      const stopAgain = await runWorker();
      const result = await handle.result().finally(stopAgain);
      expect(result).toMatchObject({ status: 'dismissed', fireCount: 0, snoozeCount: 1 });
      const listed = (await ctx.call('GET', `/v1/users/${user}/reminders`)).body.reminders;
      expect(listed.map((r: { status: string; version: number; fireCount: number }) => [r.status, r.version, r.fireCount])).toEqual([['dismissed', result.version, 0]]);
      expect((await ctx.call('GET', `/v1/users/${user}/notifications`)).body.notifications).toEqual([]);
    } finally {
      await connection.close();
    }
  });
});
