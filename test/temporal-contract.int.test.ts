import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EXTRACT_MEMORIES_INTERNAL_WORKFLOW, MEMORY_CONTRACT_VERSION, reminderWorkflowId, type ExtractMemoriesResult } from '../src/client/temporal-contract';
import { answerReminder, extractTurn } from '../examples/chat-workflow/client';
import { createChatWorker } from '../examples/chat-workflow/worker';
import { chatTurnWorkflow } from '../examples/chat-workflow/workflows';
import { userSearchAttributes } from '../workflows/shared/search-attributes';
import type { MemoryDecisionResult } from '../workflows/memory/decisions';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// Issue #13 items 1 and 2 on the real stack, with payload encryption on:
//  - a caller's worker on its own task queue, configured with Temporal's defaults (no data
//    converter), runs the example chat workflow: `recall` on the memory task queue (the same
//    answer as POST /recall), `ExtractMemories` with the messages in its input, a reminder signal;
//  - a caller's client with no data converter starts ExtractMemories and reads its result;
//  - the old extraction type still runs; unknown tenants are refused, readably;
//  - the API's forget / restore / erase / purge decisions are workflows an auditor finds.

type History = temporal.api.history.v1.IHistory;
const { History: HistoryProto } = temporal.api.history.v1;

let ctx: TestContext;
let raw: Client;
let rawConnection: Connection;
let chat: Awaited<ReturnType<typeof createChatWorker>>;
let chatRun: Promise<void>;
let chatQueue: string;

beforeAll(async () => {
  ctx = await createTestContext();
  const stack = inject('stack');
  // The caller: Temporal's defaults, nothing of the memory service's (no codec, no interceptors).
  rawConnection = await Connection.connect({ address: stack.temporalAddress });
  raw = new Client({ connection: rawConnection, namespace: ctx.runtime.config.temporal.namespace });
  chatQueue = `chat-${ctx.prefix}`;
  chat = await createChatWorker({ address: stack.temporalAddress, namespace: ctx.runtime.config.temporal.namespace, taskQueue: chatQueue });
  chatRun = chat.worker.run();
}, 180_000);

afterAll(async () => {
  if (chat) {
    chat.worker.shutdown();
    await chatRun;
    await chat.connection.close();
  }
  await rawConnection?.close();
  await ctx?.close();
});

/** Recall answers as they compare across two calls: route timings differ, nothing else may. */
function withoutTimings(body: { routes: { ms: number }[] }): unknown {
  return { ...body, routes: body.routes.map((r) => ({ ...r, ms: 0 })) };
}

/** A history's bytes as Temporal stores them (fetched without a codec). */
async function rawBytes(workflowId: string): Promise<Buffer> {
  const history: History = await raw.workflow.getHandle(workflowId).fetchHistory();
  return Buffer.from(HistoryProto.encode(history).finish());
}

describe('the Temporal contract, from a caller with Temporal defaults', () => {
  it('runs the example chat workflow: recall equals POST /recall, ExtractMemories stores and extracts the turn, a reminder is snoozed by signal', async () => {
    expect(ctx.runtime.payloadEncryption, 'this test needs payload encryption on').toBeDefined();
    const user = `${ctx.prefix}-chat`;
    const key = ctx.userKey(user);
    expect((await ctx.call('POST', `/v1/users/${user}/memories`, { text: '我对花生过敏，吃了会起疹子', type: 'fact' })).status).toBe(201);
    // The write starts a (debounced) persona rebuild; the two recalls compared below must not
    // straddle it, or one has the profile and the other not.
    const profile = async () => (await ctx.runtime.pool.query('SELECT 1 FROM user_profiles WHERE user_id = $1', [key])).rowCount ?? 0;
    expect(await poll(profile, (n) => n > 0, 60_000)).toBe(1);

    const now = new Date().toISOString();
    const viaHttp = await ctx.call('POST', `/v1/users/${user}/recall`, { query: '我对什么过敏？', now });
    expect(viaHttp.status).toBe(200);
    const turn1 = await raw.workflow.execute(chatTurnWorkflow, {
      taskQueue: chatQueue,
      workflowId: `chat-turn-${ctx.prefix}-1`,
      args: [
        {
          tenantId: 'tenant-a',
          userId: user,
          conversationId: 'c1',
          query: '我对什么过敏？',
          now,
          memoryTaskQueue: ctx.taskQueue,
          messages: [
            { id: 'm1', role: 'user', content: '我最近在准备马拉松，目标是跑进4小时。明天早上9点提醒我交房租。', at: now },
            { id: 'm2', role: 'assistant', content: '好的，我记下了。', at: now },
          ],
        },
      ],
    });

    // recall over Temporal is POST /recall.
    expect(turn1.recall.memories.some((m) => m.text.includes('花生'))).toBe(true);
    expect(withoutTimings(turn1.recall)).toEqual(withoutTimings(viaHttp.body));

    // ExtractMemories stored the messages and extracted them; the memories are in the API.
    const extraction = turn1.extraction;
    expect(extraction).toMatchObject({ contractVersion: MEMORY_CONTRACT_VERSION, userKey: key, conversationId: 'c1', messages: { inserted: ['m1', 'm2'], duplicates: [] } });
    expect(extraction.messagesProcessed).toBe(2);
    expect(extraction.decisions.some((d) => d.action === 'create' && d.text.includes('马拉松'))).toBe(true);
    const listed = await ctx.call('GET', `/v1/users/${user}/memories`);
    expect(listed.body.memories.map((m: { text: string }) => m.text).join('\n')).toContain('马拉松');
    const conversation = await ctx.runtime.pool.query('SELECT message_id FROM messages WHERE user_id = $1 AND conversation_id = $2 ORDER BY seq', [key, 'c1']);
    expect(conversation.rows.map((r) => r.message_id)).toEqual(['m1', 'm2']);

    // The reminder the conversation asked for: its workflow id is in the result and in the API.
    expect(extraction.reminders).toHaveLength(1);
    const reminder = extraction.reminders[0]!;
    expect(reminder.workflowId).toBe(reminderWorkflowId(key, reminder.reminderId));
    const viaApi = await poll(
      () => ctx.call('GET', `/v1/users/${user}/reminders/${reminder.reminderId}`),
      (r) => r.status === 200,
    );
    expect(viaApi.body).toMatchObject({ status: 'scheduled', workflowId: reminder.workflowId });

    // Next turn: the user says "稍后" to the reminder; the chat workflow signals it directly.
    const turn2 = await raw.workflow.execute(chatTurnWorkflow, {
      taskQueue: chatQueue,
      workflowId: `chat-turn-${ctx.prefix}-2`,
      args: [
        {
          tenantId: 'tenant-a',
          userId: user,
          conversationId: 'c1',
          query: '我的马拉松目标是什么？',
          memoryTaskQueue: ctx.taskQueue,
          reminderAnswer: { workflowId: reminder.workflowId, answer: 'snooze', seconds: 3600 },
          messages: [{ id: 'm3', role: 'user', content: '稍后再提醒我吧。' }],
        },
      ],
    });
    expect(turn2.answeredReminder).toBe(reminder.workflowId);
    expect(turn2.recall.memories.some((m) => m.text.includes('马拉松'))).toBe(true);
    expect(turn2.extraction.messages.inserted).toEqual(['m3']);
    const snoozed = await poll(
      () => ctx.call('GET', `/v1/users/${user}/reminders/${reminder.reminderId}`),
      (r) => r.body.status === 'snoozed',
    );
    expect(snoozed.body).toMatchObject({ status: 'snoozed', snoozeCount: 1 });

    // Found in Temporal UI by the user key, like the memory service's own workflows.
    const extractRuns = await poll(
      async () => {
        const ids: string[] = [];
        for await (const wf of raw.workflow.list({ query: `MemoryUserId = '${key}' AND WorkflowType = 'ExtractMemories'` })) ids.push(wf.workflowId);
        return ids;
      },
      (ids) => ids.length === 2,
    );
    expect(extractRuns).toHaveLength(2);
  });

  it('lets a client with no data converter start ExtractMemories and read its result; what the memory service keeps stays encrypted', async () => {
    const user = `${ctx.prefix}-client`;
    const marker = `quokka${ctx.prefix}`;
    const input = { tenantId: 'tenant-a', userId: user, conversationId: 'c7', messages: [{ id: 'm1', role: 'user' as const, content: `我对${marker}过敏，吃了会起疹子。` }] };
    const result: ExtractMemoriesResult = await extractTurn(raw, input, `${ctx.prefix}-turn-7`, ctx.taskQueue);
    expect(result.decisions.some((d) => d.action === 'create' && d.text.includes(marker))).toBe(true);
    expect(result.extractionWorkflowId).toBe(ctx.extractWorkflowId(user, 'c7'));

    // The caller's own workflow holds the caller's data in clear (its input and its answer) …
    expect((await rawBytes(`ExtractMemories:tenant-a:${ctx.prefix}-turn-7`)).includes(marker)).toBe(true);
    // … the extraction the memory service runs for it does not: every activity payload is encrypted.
    const inner = await raw.workflow.getHandle(result.extractionWorkflowId).fetchHistory();
    expect(Buffer.from(HistoryProto.encode(inner).finish()).includes(marker)).toBe(false);
    const activityPayloads = (inner.events ?? []).flatMap((e) => [
      ...(e.activityTaskScheduledEventAttributes?.input?.payloads ?? []),
      ...(e.activityTaskCompletedEventAttributes?.result?.payloads ?? []),
    ]);
    expect(activityPayloads.length).toBeGreaterThan(2);
    for (const p of activityPayloads) expect(Buffer.from(p.metadata!.encoding!).toString()).toBe('binary/encrypted');

    // Repeating the same messages is idempotent: duplicates, no second memory.
    const again = await extractTurn(raw, input, `${ctx.prefix}-turn-7b`, ctx.taskQueue);
    expect(again.messages).toEqual({ inserted: [], duplicates: ['m1'] });
    const listed = await ctx.call('GET', `/v1/users/${user}/memories`);
    expect(listed.body.memories.filter((m: { text: string }) => m.text.includes(marker))).toHaveLength(1);

    // A reminder answer from a plain client, by the contract's signal names.
    const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: '喝水', dueAt: new Date(Date.now() + 3_600_000).toISOString(), timezone: 'Asia/Shanghai' });
    expect(created.status).toBe(201);
    expect(created.body.workflowId).toBe(reminderWorkflowId(ctx.userKey(user), created.body.id));
    await answerReminder(raw, created.body.workflowId, 'dismiss');
    const dismissed = await poll(
      () => ctx.call('GET', `/v1/users/${user}/reminders/${created.body.id}`),
      (r) => r.body.status === 'dismissed',
    );
    expect(dismissed.body.status).toBe('dismissed');
  });

  it('refuses a tenant the memory service does not serve, non-retryably and readably for a default converter', async () => {
    const refused = await extractTurn(raw, { tenantId: 'tenant-zz', userId: 'someone', conversationId: 'c1', messages: [{ id: 'm1', role: 'user', content: '你好' }] }, `${ctx.prefix}-bad-tenant`, ctx.taskQueue).catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(WorkflowFailedError);
    const cause = (refused as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('forbidden');
    expect((cause as ApplicationFailure).message).toContain('tenant-zz');

    // recall from the chat workflow: the activity's failure reaches the caller's workflow as an ApplicationFailure.
    const failed = await raw.workflow
      .execute(chatTurnWorkflow, {
        taskQueue: chatQueue,
        workflowId: `chat-turn-${ctx.prefix}-bad`,
        args: [{ tenantId: 'tenant-zz', userId: 'someone', conversationId: 'c1', query: 'hi', messages: [], memoryTaskQueue: ctx.taskQueue }],
      })
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(WorkflowFailedError);
    const activityFailure = (failed as WorkflowFailedError).cause;
    expect(activityFailure).toBeInstanceOf(ActivityFailure);
    expect((activityFailure as ActivityFailure).cause).toMatchObject({ type: 'forbidden', nonRetryable: true });
  });

  it('still runs the extraction under its old type name (running histories and the API use it)', async () => {
    const user = `${ctx.prefix}-old`;
    const key = ctx.userKey(user);
    expect((await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { messages: [{ id: 'm1', role: 'user', content: '我最近在准备马拉松。' }] })).status).toBe(202);
    const result = await ctx.runtime.temporal.workflow.execute(EXTRACT_MEMORIES_INTERNAL_WORKFLOW, {
      taskQueue: ctx.taskQueue,
      workflowId: `extract-old-name-${ctx.prefix}`,
      args: [{ userId: key, conversationId: 'c1' }],
      typedSearchAttributes: userSearchAttributes(key),
    });
    expect(result).toMatchObject({ userId: key, conversationId: 'c1', messagesProcessed: 1 });
  });
});

describe('every API decision is a workflow in Temporal UI', () => {
  it('forget, restore and erase run as MemoryDecision workflows found by MemoryUserId, with the decision as result; responses as before', async () => {
    const user = `${ctx.prefix}-audit`;
    const key = ctx.userKey(user);
    const ids: string[] = [];
    for (const text of ['我喜欢喝乌龙茶', '我住在杭州', '我养了一只猫']) {
      const created = await ctx.call('POST', `/v1/users/${user}/memories`, { text, type: 'fact' });
      expect(created.status).toBe(201);
      ids.push(created.body.memory.id);
    }
    const [forgotten, archived, erased] = ids as [string, string, string];
    await ctx.runtime.deps.unitOfWork.forUser({ userId: key, work: (tx) => tx.memories.setStatus({ userId: key, id: archived, status: 'archived', at: new Date() }) });

    const forget = await ctx.call('DELETE', `/v1/users/${user}/memories/${forgotten}`);
    expect(forget.status).toBe(200);
    expect(forget.body).toMatchObject({ memory: { id: forgotten, status: 'expired' }, changed: true, vectorRemoved: true });
    const restore = await ctx.call('POST', `/v1/users/${user}/memories/${archived}/restore`);
    expect(restore.status).toBe(200);
    expect(restore.body).toMatchObject({ memory: { id: archived, status: 'active' }, vectorSynced: true });
    const erase = await ctx.call('DELETE', `/v1/users/${user}/memories/${erased}?hard=true`);
    expect(erase.status).toBe(200);
    expect(erase.body).toMatchObject({ id: erased, erased: true, vectorRemoved: true });
    // A refusal keeps its HTTP answer, and is a decision workflow too.
    const refused = await ctx.call('POST', `/v1/users/${user}/memories/${forgotten}/restore`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'invalid_state', details: { reason: 'not_archived', status: 'expired' } });

    // The audit trail links each decision to its workflow.
    const history = await ctx.call('GET', `/v1/users/${user}/memories/${forgotten}/history`);
    expect(history.body.events.at(-1)).toMatchObject({ action: 'expire', actor: 'api', workflowId: forget.body.workflowId });

    const found = await poll(
      async () => {
        const out: { workflowId: string; decisions: unknown; summary?: string }[] = [];
        for await (const wf of ctx.runtime.temporal.workflow.list({ query: `MemoryUserId = '${key}' AND WorkflowType = 'MemoryDecision'` })) {
          out.push({ workflowId: wf.workflowId, decisions: wf.searchAttributes.MemoryDecisions });
        }
        return out;
      },
      (out) => out.length === 4 && out.filter((o) => o.decisions).length === 3,
    );
    expect(found).toHaveLength(4);
    const byId = new Map(found.map((f) => [f.workflowId, f]));
    expect(byId.get(forget.body.workflowId)?.decisions).toEqual(['forget']);
    expect(byId.get(restore.body.workflowId)?.decisions).toEqual(['restore']);
    expect(byId.get(erase.body.workflowId)?.decisions).toEqual(['erase']);

    const results: MemoryDecisionResult[] = await Promise.all(found.map((f) => ctx.runtime.temporal.workflow.getHandle(f.workflowId).result()));
    expect(results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'forget', memoryId: forgotten, applied: true, outcome: expect.objectContaining({ changed: true }) }),
        expect.objectContaining({ action: 'restore', memoryId: archived, applied: true }),
        expect.objectContaining({ action: 'erase', memoryId: erased, applied: true, outcome: expect.objectContaining({ removed: expect.any(Object) }) }),
        expect.objectContaining({ action: 'restore', memoryId: forgotten, applied: false, refusal: expect.objectContaining({ code: 'invalid_state' }) }),
      ]),
    );
    // Static summaries name the action and the memory id, never its text.
    const described = await ctx.runtime.temporal.workflow.getHandle(erase.body.workflowId).describe();
    expect(await described.staticSummary()).toBe(`Erase memory ${erased} (API request)`);

    // The auditor's queries of docs/audit.md.
    const listIds = async (query: string) => {
      const out: string[] = [];
      for await (const wf of ctx.runtime.temporal.workflow.list({ query })) out.push(wf.workflowId);
      return out.sort();
    };
    expect(await listIds(`MemoryUserId = '${key}' AND MemoryDecisions = 'erase'`)).toEqual([erase.body.workflowId]);
    expect(await listIds(`MemoryUserId = '${key}' AND MemoryDecisions IN ('forget', 'erase')`)).toEqual([forget.body.workflowId, erase.body.workflowId].sort());
    const refusal = found.find((f) => !f.decisions)!.workflowId;
    expect(await listIds(`MemoryUserId = '${key}' AND WorkflowType = 'MemoryDecision' AND MemoryDecisions IS NULL`)).toEqual([refusal]);
    expect(await listIds(`MemoryTenant = 'tenant-a' AND MemoryUserId = '${key}' AND MemoryDecisions IN ('create') AND StartTime > '2020-01-01T00:00:00Z'`)).toHaveLength(3);
  });

  it('a purge is found by MemoryDecisions and MemoryTenant, never by the user key it erased', async () => {
    const user = `${ctx.prefix}-gone`;
    expect((await ctx.call('POST', `/v1/users/${user}/memories`, { text: '我喜欢爬山', type: 'preference' })).status).toBe(201);
    const purged = await ctx.call('DELETE', `/v1/users/${user}?wait=true`);
    expect(purged.status).toBe(200);
    const described = await ctx.runtime.temporal.workflow.getHandle(purged.body.workflowId).describe();
    expect(described.searchAttributes.MemoryDecisions).toEqual(['purge']);
    expect(described.searchAttributes.MemoryTenant).toEqual(['tenant-a']);
    expect(described.searchAttributes.MemoryUserId).toBeUndefined();
    const listed = await poll(
      async () => {
        const out: string[] = [];
        for await (const wf of ctx.runtime.temporal.workflow.list({ query: `WorkflowType = 'PurgeUser' AND MemoryDecisions = 'purge' AND MemoryTenant = 'tenant-a' AND WorkflowId = '${purged.body.workflowId}'` })) out.push(wf.workflowId);
        return out;
      },
      (out) => out.length > 0,
    );
    expect(listed).toEqual([purged.body.workflowId]);
  });
});
