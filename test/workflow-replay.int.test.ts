import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { digestWorkflow } from '../workflows/proactive/digest';
import { extractionReconcilerWorkflow, vectorOutboxWorkflow } from '../workflows/conversation/reconcilers';
import { memorySweepWorkflow } from '../workflows/lifecycle/memory-sweep';
import { nudgeWorkflow } from '../workflows/proactive/nudge';
import { weeklyReinforcementWorkflow } from '../workflows/lifecycle/weekly-reinforcement';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// Workflow code must stay deterministic, and a change must not break workflows already running.
// 1. Every workflow type runs on the real dev server (through the API where one exists), and each
//    history is replayed against the current bundle.
// 2. Histories recorded from an earlier version (test/fixtures/histories, written by
//    RECORD_HISTORIES=1 from step 1) are replayed against the current bundle. A change to workflow
//    code that would make them diverge must be guarded with patched(), or this test fails.

type History = temporal.api.history.v1.IHistory;
// Binary protobuf, not JSON: the SDK's JSON helpers fail here ("type must be a Type") because
// @temporalio/common and @temporalio/proto each carry their own copy of protobufjs.
const { History: HistoryCodec } = temporal.api.history.v1;
const FIXTURES = join(import.meta.dirname, 'fixtures', 'histories');

let ctx: TestContext;
const fresh: { workflowId: string; type: string; history: History }[] = [];

beforeAll(async () => {
  ctx = await createTestContext({ CONVERSATION_IDLE_SECONDS: '3600' });
  const user = `${ctx.prefix}-replay`;
  const client = ctx.runtime.temporal;

  // storeMemoryWorkflow
  const stored = await ctx.call('POST', `/v1/users/${user}/memories`, { text: '我对花生过敏，吃了会起疹子', type: 'fact' });
  expect(stored.status).toBe(201);
  // MemoryDecision (forget through the API)
  const extra = await ctx.call('POST', `/v1/users/${user}/memories`, { text: '我住在杭州', type: 'fact' });
  expect((await ctx.call('DELETE', `/v1/users/${user}/memories/${extra.body.memory.id}`)).status).toBe(200);
  // ExtractMemories (the Temporal contract: messages in the input, extractMemoriesWorkflow as its child)
  await client.workflow.execute('ExtractMemories', {
    taskQueue: ctx.taskQueue,
    workflowId: `replay-extract-call:${ctx.prefix}`,
    args: [{ tenantId: 'tenant-a', userId: user, conversationId: 'c2', messages: [{ id: 'm1', role: 'user', content: '我最近开始学游泳了。' }] }],
  });
  // conversationWorkflow → extractMemoriesWorkflow (→ a reminder child from "明天早上9点提醒我…")
  const messages = [
    { id: 'm1', role: 'user', content: '我最近在准备马拉松，目标是跑进4小时。明天早上9点提醒我交房租。', at: '2026-06-01T10:00:00+08:00' },
    { id: 'm2', role: 'assistant', content: '好的，我推荐你读《跑步圣经》。', at: '2026-06-01T10:00:30+08:00' },
  ];
  expect((await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { messages })).status).toBeLessThan(300);
  expect((await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {})).status).toBe(200);
  // recallReinforcementWorkflow (signalled after a recall that found something)
  await ctx.call('POST', `/v1/users/${user}/recall`, { query: '我对什么过敏？' });
  // reminderWorkflow: timer fires, snooze signal, dismiss signal
  const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: '提醒：喝水', dueAt: new Date(Date.now() + 1_500).toISOString(), timezone: 'Asia/Shanghai' });
  expect(created.status).toBe(201);
  const reminderPath = `/v1/users/${user}/reminders/${created.body.id}`;
  await poll(() => ctx.call('GET', reminderPath), (r) => r.body.status === 'fired');
  expect((await ctx.call('POST', `${reminderPath}/snooze`, { seconds: 600 })).status).toBe(200);
  await poll(() => ctx.call('GET', reminderPath), (r) => r.body.status === 'snoozed');
  expect((await ctx.call('POST', `${reminderPath}/dismiss`, {})).status).toBe(200);
  await client.workflow.getHandle(created.body.workflowId).result();
  // The scheduled ones, started directly (Schedules start exactly these workflows).
  const now = new Date().toISOString();
  await client.workflow.execute(digestWorkflow, { taskQueue: ctx.taskQueue, workflowId: `replay-digest:${ctx.prefix}`, args: [{ userId: ctx.userKey(user) }] });
  await client.workflow.execute(nudgeWorkflow, { taskQueue: ctx.taskQueue, workflowId: `replay-nudge:${ctx.prefix}`, args: [{ userId: ctx.userKey(user) }] });
  await client.workflow.execute(memorySweepWorkflow, { taskQueue: ctx.taskQueue, workflowId: `replay-sweep:${ctx.prefix}`, args: [{ now, batchSize: 400, maxStepsPerRun: 3, stepBudgetMs: 1 }] });
  await client.workflow.execute(weeklyReinforcementWorkflow, { taskQueue: ctx.taskQueue, workflowId: `replay-weekly:${ctx.prefix}`, args: [{ now, batchSize: 150, maxStepsPerRun: 2, stepBudgetMs: 1 }] });
  // The reconcilers' Schedules start exactly these.
  await client.workflow.execute(extractionReconcilerWorkflow, { taskQueue: ctx.taskQueue, workflowId: `replay-reconcile:${ctx.prefix}`, args: [{}] });
  await client.workflow.execute(vectorOutboxWorkflow, { taskQueue: ctx.taskQueue, workflowId: `replay-drain:${ctx.prefix}`, args: [{}] });

  // Every execution on this test's task queue, finished or still running (a running history replays too).
  for await (const execution of client.workflow.list({ query: `TaskQueue = "${ctx.taskQueue}"` })) {
    const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
    fresh.push({ workflowId: execution.workflowId, type: execution.type, history: await handle.fetchHistory() });
  }

  if (process.env.RECORD_HISTORIES) {
    mkdirSync(FIXTURES, { recursive: true });
    for (const type of new Set(fresh.map((f) => f.type))) {
      const first = fresh.find((f) => f.type === type)!;
      writeFileSync(join(FIXTURES, `${type}.binpb`), HistoryCodec.encode(first.history).finish());
    }
  }
}, 300_000);

afterAll(async () => {
  await ctx?.close();
});

async function replay(histories: { workflowId: string; history: History }[]): Promise<{ workflowId: string; error?: string }[]> {
  const outcomes: { workflowId: string; error?: string }[] = [];
  // The runtime's data converter: fresh histories are encrypted; the recorded ones are not, and pass through.
  const results = Worker.runReplayHistories({ workflowBundle: { code: inject('workflowBundle') }, dataConverter: ctx.runtime.dataConverter, replayName: 'replay-test' }, histories);
  for await (const r of results) outcomes.push({ workflowId: r.workflowId, ...(r.error ? { error: String(r.error) } : {}) });
  return outcomes;
}

describe('workflow histories replay against the current code', () => {
  it('runs every workflow type on the dev server, and each history replays without nondeterminism', async () => {
    const types = new Set(fresh.map((f) => f.type));
    for (const type of [
      'storeMemoryWorkflow',
      'conversationWorkflow',
      'extractMemoriesWorkflow',
      'recallReinforcementWorkflow',
      'recallNudgeWorkflow',
      'reminderWorkflow',
      'digestWorkflow',
      'nudgeWorkflow',
      'memorySweepWorkflow',
      'weeklyReinforcementWorkflow',
      'extractionReconcilerWorkflow',
      'vectorOutboxWorkflow',
      'ExtractMemories',
      'MemoryDecision',
    ])
      expect(types, `no ${type} ran`).toContain(type);
    const outcomes = await replay(fresh);
    expect(outcomes).toHaveLength(fresh.length);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
  });

  it('replays the histories recorded from an earlier version (in-flight workflows survive the change)', async () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.binpb'));
    expect(files.length).toBeGreaterThanOrEqual(13);
    const recorded = files.map((f) => ({ workflowId: f.replace(/\.binpb$/, ''), history: HistoryCodec.decode(readFileSync(join(FIXTURES, f))) }));
    const outcomes = await replay(recorded);
    expect(outcomes).toHaveLength(files.length);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
  });

  it('would catch a nondeterministic change: a history replayed against a different workflow fails', async () => {
    // The reminder's history offered to the store workflow's code: the commands cannot match.
    const reminder = fresh.find((f) => f.type === 'reminderWorkflow')!;
    const events = reminder.history.events!.map((e, i) =>
      i === 0 ? { ...e, workflowExecutionStartedEventAttributes: { ...e.workflowExecutionStartedEventAttributes, workflowType: { name: 'storeMemoryWorkflow' } } } : e,
    );
    const outcomes = await replay([{ workflowId: 'tampered', history: { events } }]);
    expect(outcomes[0]?.error).toBeDefined();
  });
});
