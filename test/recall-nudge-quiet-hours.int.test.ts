import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../activities';
import { recallHitsSignal, recallNudgeStateQuery, recallNudgeWorkflowId, type RecallNudgeState } from '../src/proactive/contract';
import { recallNudgeWorkflow } from '../workflows';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';
import { createTimeSkippingEnv } from './support/time-skipping';
import { seedMemories } from './support/seed';

// recallNudgeWorkflow on the Java time-skipping test server, with the real activities on this
// file's own database: a recall at 23:00 in Shanghai, quiet hours 22:00–08:00. The nudge is not
// dropped: the workflow sleeps until 08:00 and decides again then, on the settings of 08:00.
let ctx: TestContext;
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `ts-${randomUUID().slice(0, 8)}`;
const ZONE = 'Asia/Shanghai';
const FIXTURE = join(import.meta.dirname, 'fixtures', 'histories', 'recallNudgeWorkflow-quiet-hours.binpb');
const { History: HistoryCodec } = temporal.api.history.v1;

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
}, 240_000);
afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
  await ctx?.close();
});

const night = { enabled: true, probability: 1, maxPerDay: 5, quietHours: { start: '22:00', end: '08:00' } };

/** The test server's clock moved on to the next 23:00 in Shanghai; returns that instant. */
async function skipTo2300(): Promise<DateTime> {
  const now = DateTime.fromMillis(await env.currentTimeMs(), { zone: ZONE });
  let at = now.set({ hour: 23, minute: 0, second: 0, millisecond: 0 });
  if (at <= now) at = at.plus({ days: 1 });
  await env.sleep(at.toMillis() - now.toMillis());
  return DateTime.fromMillis(await env.currentTimeMs(), { zone: ZONE });
}

async function recalledAtNight(user: string) {
  expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: ZONE, proactive: night })).status).toBe(200);
  const userId = ctx.userKey(user);
  const [goal] = await seedMemories(ctx.runtime.deps, userId, [{ text: '年底前把马拉松跑进 4 小时', type: 'goal', importance: 0.7, at: new Date() }]);
  const at = await skipTo2300();
  expect(at.hour).toBe(23);
  const handle = await env.client.workflow.signalWithStart(recallNudgeWorkflow, {
    taskQueue,
    workflowId: recallNudgeWorkflowId(userId),
    args: [{ userId, flushSeconds: 1 }],
    signal: recallHitsSignal,
    signalArgs: [{ memoryIds: [goal!], at: at.toISO()! }],
  });
  return { userId, goal: goal!, at, handle };
}

async function nudgeRows(userId: string) {
  const { rows } = await ctx.runtime.pool.query<{ created_at: Date; data: { memoryId?: string } }>(
    `SELECT created_at, data FROM notifications WHERE user_id = $1 AND kind = 'nudge' ORDER BY seq`,
    [userId],
  );
  return rows;
}

describe('a recall nudge refused only by quiet hours', () => {
  it('is delivered at 08:00 local, not dropped, when the recall came at 23:00 with quiet hours 22:00–08:00', async () => {
    const { userId, goal, at, handle } = await recalledAtNight(`${ctx.prefix}-night`);
    await handle.result(); // the time-skipping server runs through the night and the idle wait
    // RECORD_HISTORIES=1 on the code before the wait recorded the fixture the last test replays.
    if (process.env.RECORD_HISTORIES) writeFileSync(FIXTURE, HistoryCodec.encode(await handle.fetchHistory()).finish());
    const rows = await nudgeRows(userId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.data.memoryId).toBe(goal);
    const delivered = DateTime.fromJSDate(rows[0]!.created_at, { zone: ZONE });
    expect(delivered.toISODate()).toBe(at.plus({ days: 1 }).toISODate());
    expect(delivered.hour).toBe(8);
    expect(delivered.minute).toBe(0);
  }, 240_000);

  it('is not delivered when the user opted out while it waited: every rule is checked again at 08:00', async () => {
    const user = `${ctx.prefix}-optout`;
    const { userId, handle } = await recalledAtNight(user);
    const waiting = await poll(
      () => handle.query(recallNudgeStateQuery),
      (s: RecallNudgeState) => s.recent.length > 0,
      60_000,
    );
    expect(waiting.recent[0]).toMatchObject({ delivered: false, decision: { send: false, reason: 'quiet-hours' } });
    expect(waiting.recent[0]!.deferredUntil).toBe(DateTime.fromISO(waiting.recent[0]!.deferredUntil!).setZone(ZONE).set({ hour: 8, minute: 0, second: 0, millisecond: 0 }).toUTC().toISO());
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: ZONE, proactive: { ...night, enabled: false } })).status).toBe(200);
    await handle.result();
    expect(await nudgeRows(userId)).toEqual([]);
    const history = await handle.fetchHistory();
    const activities = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
    // Loaded twice (23:00, 08:00), never delivered.
    expect(activities).toEqual(['loadRecallNudgeContext', 'loadRecallNudgeContext']);
  }, 240_000);

  it('replays a history recorded before the wait existed (it dropped the nudge): patched() keeps it deterministic', async () => {
    const history = HistoryCodec.decode(readFileSync(FIXTURE));
    // That history holds one decision and no second load: the old behaviour, recorded.
    const loads = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'loadRecallNudgeContext');
    expect(loads).toHaveLength(1);
    await Worker.runReplayHistory({ workflowBundle: { code: inject('workflowBundle') }, replayName: 'quiet-hours-replay' }, history);
  }, 120_000);
});
