import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadTemporalClient } from './support/proxied-temporal';
import { chromaClient } from '../src/adapters/chroma/user-collections';
import type { ChromaVectorIndex } from '../src/adapters/chroma/chroma-vector-index';
import { PostgresOutboxRetryRepository } from '../src/adapters/postgres/outbox-retry-repository';
import type { ConversationMessage } from '../src/core/types';
import { extractRunPage } from '../src/conversation/extraction-runs';
import { OfflineExtractor } from '../src/adapters/extraction/offline-extractor';
import type { ExtractionOutput, Extractor } from '../src/core/ports/conversation';
import { drainOutbox } from '../src/memory/outbox-drain';
import { exchangeIndexScheduleId, extractionReconcilerScheduleId, outboxDrainScheduleId } from '../src/lifecycle/reliability-schedules';
import { vectorOutboxWorkflow } from '../workflows';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';
import { seedMemories } from './support/seed';

// Issue #14 items 2–5 on the real stack: incremental extraction with a watermark, no message lost
// to an idle timer firing during a run, messages stored while Temporal is down extracted by the
// reconciler, the vector outbox's backoff and dead letters, LLM calls that heartbeat and are never
// paid for twice, and API waits that end in 202.

let ctx: TestContext; // idle timers an hour long: extractions run when a test ends a conversation
let idle: TestContext; // idle timers of 2 s, Temporal calls cut at 1.5 s
beforeAll(async () => {
  [ctx, idle] = await Promise.all([
    createTestContext({ OUTBOX_MAX_ATTEMPTS: '3', OUTBOX_RETRY_BASE_SECONDS: '1', OUTBOX_RETRY_MAX_SECONDS: '1' }),
    createTestContext({ CONVERSATION_IDLE_SECONDS: '2', TEMPORAL_CALL_TIMEOUT_MS: '1500' }),
  ]);
});
afterAll(async () => {
  for (const id of [extractionReconcilerScheduleId(idle?.taskQueue ?? ''), outboxDrainScheduleId(idle?.taskQueue ?? ''), exchangeIndexScheduleId(idle?.taskQueue ?? '')]) {
    await idle?.runtime.temporal.schedule.getHandle(id).delete().catch(() => {});
  }
  await Promise.all([ctx?.close(), idle?.close()]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The offline rules, recording which messages each call saw; optionally slow, held until a gate
 * opens, or wording every statement differently on each call (a non-deterministic model).
 */
class RecordingExtractor implements Extractor {
  readonly calls: string[][] = [];
  inFlight = 0;
  private readonly inner = new OfflineExtractor();
  private gate?: Promise<void>;
  private openGate?: () => void;

  constructor(
    readonly name: string,
    private readonly opts: { delayMs?: number; reword?: boolean; holdFirstCall?: boolean } = {},
  ) {
    if (opts.holdFirstCall) this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
  }

  async extract(input: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput> {
    this.calls.push(input.messages.map((m) => m.id));
    const take = this.calls.length;
    this.inFlight++;
    try {
      const gate = this.gate;
      this.gate = undefined;
      if (gate) await gate;
      if (this.opts.delayMs) await sleep(this.opts.delayMs);
      const out = await this.inner.extract(input);
      if (!this.opts.reword) return out;
      return { ...out, candidates: out.candidates.map((c) => ({ ...c, text: `${c.text.replace(/[.!]$/, '')}, as said (take ${take})` })) };
    } finally {
      this.inFlight--;
    }
  }
}

function useExtractor(c: TestContext, extractor: Extractor): () => void {
  const previous = c.runtime.deps.extractor;
  c.runtime.deps.extractor = extractor;
  return () => {
    c.runtime.deps.extractor = previous;
  };
}

async function post(c: TestContext, user: string, conversation: string, messages: { id: string; content: string }[]) {
  const res = await c.call('POST', `/v1/users/${user}/conversations/${conversation}/messages`, { messages: messages.map((m) => ({ ...m, role: 'user' })) });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body as { accepted: string[]; workflowId: string; pending: boolean };
}

async function endAndWait(c: TestContext, user: string, conversation: string) {
  const res = await c.call('POST', `/v1/users/${user}/conversations/${conversation}/end?wait=true`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.result as { messagesProcessed: number; decisions: { action: string; messageIds: string[]; replayed: boolean; text: string }[] };
}

async function activeMemories(c: TestContext, user: string) {
  return (await c.call('GET', `/v1/users/${user}/memories?status=active&limit=200`)).body.memories as { id: string; text: string; frequencyCount: number; source: { messageIds: string[] } }[];
}

async function conversationRow(c: TestContext, user: string, conversation: string) {
  const { rows } = await c.runtime.pool.query('SELECT extracted_seq, last_seq FROM conversations WHERE user_id = $1 AND conversation_id = $2', [c.userKey(user), conversation]);
  return { extractedSeq: Number(rows[0].extracted_seq), lastSeq: Number(rows[0].last_seq) };
}

/** Message ids named by the user's recorded decisions (the keyed decision events). */
async function decidedMessageIds(c: TestContext, user: string): Promise<Set<string>> {
  const { rows } = await c.runtime.pool.query<{ message_ids: string[] }>('SELECT message_ids FROM memory_events WHERE user_id = $1 AND idempotency_key IS NOT NULL', [c.userKey(user)]);
  return new Set(rows.flatMap((r) => r.message_ids));
}

async function historyEventTypes(c: TestContext, workflowId: string): Promise<string[]> {
  const history = await c.runtime.temporal.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).map((e) => String(temporal.api.enums.v1.EventType[e.eventType ?? 0]));
}

describe('incremental extraction', () => {
  it('a second run extracts only the messages after the watermark', async () => {
    const user = `${ctx.prefix}-inc`;
    const recorder = new RecordingExtractor('recording');
    const restore = useExtractor(ctx, recorder);
    try {
      await post(ctx, user, 'c1', [
        { id: 'm1', content: 'I live in Porto.' },
        { id: 'm2', content: 'I work as a nurse.' },
      ]);
      const first = await endAndWait(ctx, user, 'c1');
      expect(first.messagesProcessed).toBe(2);
      expect(recorder.calls).toEqual([['m1', 'm2']]);
      const afterFirst = await conversationRow(ctx, user, 'c1');
      expect(afterFirst.extractedSeq).toBe(afterFirst.lastSeq);

      await post(ctx, user, 'c1', [{ id: 'm3', content: 'I love hiking on weekends.' }]);
      const second = await endAndWait(ctx, user, 'c1');
      expect(second.messagesProcessed).toBe(1);
      expect(recorder.calls).toEqual([['m1', 'm2'], ['m3']]);
      expect(second.decisions.flatMap((d) => d.messageIds)).toEqual(['m3']);

      // Nothing new: a run reads nothing and calls no extractor.
      const third = await endAndWait(ctx, user, 'c1');
      expect(third).toMatchObject({ messagesProcessed: 0, decisions: [] });
      expect(recorder.calls).toHaveLength(2);
      const row = await conversationRow(ctx, user, 'c1');
      expect(row.extractedSeq).toBe(row.lastSeq);
    } finally {
      restore();
    }
  });

  it('a non-deterministic extractor re-reading the same messages does not re-decide them', async () => {
    const user = `${ctx.prefix}-nondet`;
    const model = new RecordingExtractor('nondeterministic', { reword: true });
    const restore = useExtractor(ctx, model);
    try {
      await post(ctx, user, 'c1', [
        { id: 'm1', content: 'I love hiking on weekends.' },
        { id: 'm2', content: 'I work as a nurse.' },
      ]);
      const first = await endAndWait(ctx, user, 'c1');
      expect(first.decisions.map((d) => d.action).sort()).toEqual(['create', 'create']);
      const before = await activeMemories(ctx, user);

      // The crash window this guards: decisions applied, watermark and stored page output lost.
      await ctx.runtime.pool.query('UPDATE conversations SET extracted_seq = 0 WHERE user_id = $1', [ctx.userKey(user)]);
      await ctx.runtime.pool.query('DELETE FROM extraction_pages WHERE user_id = $1', [ctx.userKey(user)]);
      const second = await endAndWait(ctx, user, 'c1');
      expect(model.calls).toEqual([
        ['m1', 'm2'],
        ['m1', 'm2'],
      ]);
      // Worded differently this time…
      expect(second.decisions.map((d) => d.text).join()).toContain('take 2');
      // …yet every decision is the one recorded by the first run, and nothing changed.
      expect(second.decisions).toHaveLength(2);
      expect(second.decisions.every((d) => d.replayed)).toBe(true);
      const after = await activeMemories(ctx, user);
      expect(after.map((m) => `${m.id}|${m.text}|${m.frequencyCount}`).sort()).toEqual(before.map((m) => `${m.id}|${m.text}|${m.frequencyCount}`).sort());
    } finally {
      restore();
    }
  });

  it('an idle timer firing while an extraction runs loses no message: the late messages get a run', async () => {
    const user = `${idle.prefix}-race`;
    const recorder = new RecordingExtractor('held', { holdFirstCall: true });
    const restore = useExtractor(idle, recorder);
    try {
      await post(idle, user, 'c1', [{ id: 'm1', content: 'I live in Porto.' }]);
      const ended = await idle.call('POST', `/v1/users/${user}/conversations/c1/end`, {});
      expect(ended.status).toBe(202);
      // The end call's extraction has read its page (m1) and is held inside the extractor.
      await poll(async () => recorder.inFlight, (n) => n > 0, 15_000, 50);
      expect(recorder.calls).toEqual([['m1']]);

      // Messages after that page: a new idle timer (2 s) fires while the extraction still runs.
      const late = await post(idle, user, 'c1', [
        { id: 'm2', content: 'I work as a nurse.' },
        { id: 'm3', content: 'I love hiking on weekends.' },
      ]);
      const events = await poll(() => historyEventTypes(idle, late.workflowId), (e) => e.includes('EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED'), 20_000, 250);
      expect(events).toContain('EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED');
      recorder.release();

      const outcome = await idle.runtime.temporal.workflow.getHandle(late.workflowId).result();
      expect(outcome.outcome).toBe('idle-extracted');
      const endRun = await idle.runtime.temporal.workflow.getHandle(ended.body.workflowId, ended.body.runId).result();
      // Every message was read by some run, and every one of them is the source of a decision.
      expect(endRun.messagesProcessed + (outcome.extraction?.messagesProcessed ?? 0)).toBe(3);
      expect([...(await decidedMessageIds(idle, user))].sort()).toEqual(['m1', 'm2', 'm3']);
      expect(recorder.calls.flat().sort()).toEqual(['m1', 'm2', 'm3']);
      const row = await conversationRow(idle, user, 'c1');
      expect(row.extractedSeq).toBe(row.lastSeq);
    } finally {
      recorder.release();
      restore();
    }
  });
});

describe('Temporal unavailable', () => {
  it('messages are stored with 202 + pending, and the reconciler extracts them after recovery', async () => {
    const user = `${idle.prefix}-down`;
    // An API whose Temporal client points at a closed port.
    const { temporal: deadTemporal } = await deadTemporalClient(idle.runtime.config.temporal.namespace);
    const api = await idle.runtime.createApi({ taskQueue: idle.taskQueue, temporal: deadTemporal });
    try {
      const t0 = Date.now();
      const res = await api.inject({
        method: 'POST',
        url: `/v1/users/${user}/conversations/c1/messages`,
        headers: { authorization: `Bearer ${TEST_KEY}` },
        payload: { messages: [{ id: 'm1', role: 'user', content: 'I am allergic to penicillin.' }, { id: 'm2', role: 'user', content: 'I have a cat named Pixel.' }] },
      });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({ accepted: ['m1', 'm2'], pending: true });
      expect(Date.now() - t0).toBeLessThan(10_000);
      // An end call cannot reach Temporal either: stored, 202 pending, and still nothing is lost.
      const end = await api.inject({ method: 'POST', url: `/v1/users/${user}/conversations/c1/end`, headers: { authorization: `Bearer ${TEST_KEY}` }, payload: {} });
      expect(end.statusCode, end.body).toBe(202);
      expect(end.json()).toEqual({ workflowId: idle.extractWorkflowId(user, 'c1'), pending: true });
    } finally {
      await api.close();
      await deadTemporal.connection.close().catch(() => {});
    }
    const row = await conversationRow(idle, user, 'c1');
    expect(row.extractedSeq).toBeLessThan(row.lastSeq);

    // Recovery: the worker's schedules exist (idempotently), and the reconciler's next tick runs.
    const q = idle.taskQueue;
    expect(await idle.runtime.ensureSchedules({ taskQueue: q })).toMatchObject({ [extractionReconcilerScheduleId(q)]: 'created', [outboxDrainScheduleId(q)]: 'created' });
    expect(await idle.runtime.ensureSchedules({ taskQueue: q })).toMatchObject({ [extractionReconcilerScheduleId(q)]: 'unchanged', [outboxDrainScheduleId(q)]: 'unchanged' });
    const schedule = idle.runtime.temporal.schedule.getHandle(extractionReconcilerScheduleId(q));
    const described = await schedule.describe();
    expect(described.action).toMatchObject({ workflowType: 'extractionReconcilerWorkflow', taskQueue: q });
    expect(described.spec.intervals?.[0]?.every).toBe(idle.runtime.config.reliability.reconcileSeconds * 1000);

    await sleep(2_500); // idle for CONVERSATION_IDLE_SECONDS
    await schedule.trigger();
    const memories = await poll(() => activeMemories(idle, user), (m) => m.length >= 2, 30_000, 250);
    expect(memories.map((m) => m.text).join(' | ')).toMatch(/penicillin.*Pixel|Pixel.*penicillin/);
    const extraction = await idle.runtime.temporal.workflow.getHandle(idle.extractWorkflowId(user, 'c1')).result();
    expect(extraction.messagesProcessed).toBe(2);
    const after = await conversationRow(idle, user, 'c1');
    expect(after.extractedSeq).toBe(after.lastSeq);
  });
});

describe('vector outbox', () => {
  it('backs a poisoned entry off and dead-letters it while later entries drain; /healthz reports it', async () => {
    const pool = ctx.runtime.pool;
    const poisoned = ctx.userKey(`${ctx.prefix}-poisoned`);
    const healthy = ctx.userKey(`${ctx.prefix}-healthy`);
    // A Chroma collection holding 3-dimensional vectors refuses every 384-dimensional write: a real poison.
    const chroma = chromaClient(ctx.runtime.endpoints.chromaUrl);
    const collection = await chroma.getOrCreateCollection({
      name: (ctx.runtime.deps.vectors as ChromaVectorIndex).collectionName(poisoned),
      embeddingFunction: null,
      configuration: { hnsw: { space: 'cosine' } },
      metadata: { user_id: poisoned, kind: 'memories' },
    });
    await collection.add({ ids: ['poison'], embeddings: [[0.1, 0.2, 0.3]], metadatas: [{ user_id: poisoned }] });
    const bad = await seedMemories(ctx.runtime.deps, poisoned, [{ text: 'I live in Porto' }, { text: 'I work as a nurse' }]);
    const good = await seedMemories(ctx.runtime.deps, healthy, [{ text: 'I love hiking' }, { text: 'I have a cat named Pixel' }, { text: 'I hate cilantro' }]);
    // The healthy user's vectors are gone again and re-enqueued after the poisoned ones: before
    // this change a drain of 2 took the poisoned pair at the head every time and never got here.
    await ctx.runtime.deps.vectors.remove({ userId: healthy, ids: good });
    await pool.query(`INSERT INTO vector_outbox (memory_id, user_id, op, enqueued_at) SELECT unnest($2::uuid[]), $1, 'upsert', clock_timestamp()`, [healthy, good]);
    const pending = await pool.query(`SELECT memory_id FROM vector_outbox WHERE user_id = ANY($1::text[]) ORDER BY next_attempt_at, enqueued_at`, [[poisoned, healthy]]);
    expect(pending.rows.map((r) => r.memory_id)).toEqual([...bad, ...good]);

    const outbox = new PostgresOutboxRetryRepository(pool);
    const policy = ctx.runtime.deps.config.reliability.outbox; // 3 attempts, 1 s backoff
    const drainDeps = { outbox, vectors: ctx.runtime.deps.vectors, embedder: ctx.runtime.deps.embedder };
    for (let pass = 0; pass < 4; pass++) await drainOutbox(drainDeps, { policy, limit: 2 });
    const { rows: left } = await pool.query(
      `SELECT memory_id, user_id, attempts, next_attempt_at >= enqueued_at + interval '900 milliseconds' AS backed_off, dead_lettered_at, last_error
         FROM vector_outbox WHERE user_id = ANY($1::text[])`,
      [[poisoned, healthy]],
    );
    expect(left.filter((r) => r.user_id === healthy)).toEqual([]);
    const stored = await (await chroma.getCollection({ name: (ctx.runtime.deps.vectors as ChromaVectorIndex).collectionName(healthy), embeddingFunction: null as never })).get({ ids: good });
    expect(stored.ids.sort()).toEqual([...good].sort());
    expect(left.map((r) => r.memory_id).sort()).toEqual([...bad].sort());
    // Each failed alone, with Chroma's reason, and was put off by the backoff (1 s here).
    expect(left.every((r) => r.attempts >= 2 && r.backed_off && /Chroma upsert failed: .*dimension/i.test(r.last_error))).toBe(true);

    // Retried after their backoff until the third failure dead-letters them.
    for (let i = 0; i < 8; i++) {
      await sleep(1_100);
      await drainOutbox(drainDeps, { policy, limit: 2 });
      const { rows } = await pool.query('SELECT count(*)::int AS n FROM vector_outbox WHERE user_id = $1 AND dead_lettered_at IS NOT NULL', [poisoned]);
      if (rows[0].n === 2) break;
    }
    const { rows: dead } = await pool.query('SELECT attempts, dead_lettered_at FROM vector_outbox WHERE user_id = $1', [poisoned]);
    expect(dead).toHaveLength(2);
    expect(dead.every((r) => r.attempts === 3 && r.dead_lettered_at !== null)).toBe(true);
    expect(await outbox.due({ limit: 10, userId: poisoned })).toEqual([]);

    // Counts are operator detail: the operator token (CODEC_AUTH_TOKEN) shows them, a probe sees the status.
    expect((await ctx.call('GET', '/healthz', undefined, { authorization: '' })).body.checks.outbox).toEqual({ status: 'degraded' });
    const health = await ctx.call('GET', '/healthz', undefined, { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` });
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('degraded');
    expect(health.body.checks.outbox).toMatchObject({ status: 'degraded', deadLetters: 2 });
    expect(typeof health.body.checks.outbox.pending).toBe('number');

    // The scheduled drain (the workflow the Schedule starts) passes over dead letters and drains the rest.
    const [fresh] = await seedMemories(ctx.runtime.deps, healthy, [{ text: 'I drink green tea' }]);
    await ctx.runtime.deps.vectors.remove({ userId: healthy, ids: [fresh!] });
    await pool.query(`INSERT INTO vector_outbox (memory_id, user_id, op, enqueued_at) VALUES ($1, $2, 'upsert', clock_timestamp())`, [fresh, healthy]);
    const summary = await ctx.runtime.temporal.workflow.execute(vectorOutboxWorkflow, { taskQueue: ctx.taskQueue, workflowId: `drain-test:${ctx.prefix}`, args: [{}] });
    expect(summary.upserted).toBeGreaterThanOrEqual(1);
    expect((await pool.query('SELECT 1 FROM vector_outbox WHERE memory_id = $1', [fresh])).rowCount).toBe(0);

    // A new write of a dead-lettered memory re-enqueues it: due now, no longer dead.
    await pool.query(`UPDATE vector_outbox SET enqueued_at = clock_timestamp() WHERE memory_id = $1`, [bad[0]]);
    const { rows: revived } = await pool.query('SELECT dead_lettered_at, next_attempt_at <= clock_timestamp() AS due FROM vector_outbox WHERE memory_id = $1', [bad[0]]);
    expect(revived[0]).toEqual({ dead_lettered_at: null, due: true });
    // Operators clear what cannot be repaired (docs/reliability.md); /healthz is ok again.
    await pool.query('DELETE FROM vector_outbox WHERE user_id = $1', [poisoned]);
    expect((await ctx.call('GET', '/healthz', undefined, { authorization: '' })).body.checks.outbox.status).toBe('ok');
  });
});

describe('LLM calls', () => {
  it('a model slower than the heartbeat timeout is called once: the activity heartbeats while it waits', async () => {
    const user = `${ctx.prefix}-slow`;
    const slow = new RecordingExtractor('slow-model', { delayMs: 25_000 });
    const restore = useExtractor(ctx, slow);
    try {
      await post(ctx, user, 'c1', [{ id: 'm1', content: 'I am allergic to penicillin.' }]);
      const result = await endAndWait(ctx, user, 'c1');
      expect(result.decisions.map((d) => d.action)).toEqual(['create']);
      expect(slow.calls).toEqual([['m1']]);
      // The 20 s heartbeat timeout never fired: no timed-out attempt, no second attempt.
      const events = await historyEventTypes(ctx, ctx.extractWorkflowId(user, 'c1'));
      expect(events).not.toContain('EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT');
      const history = await ctx.runtime.temporal.workflow.getHandle(ctx.extractWorkflowId(user, 'c1')).fetchHistory();
      expect(history.events!.filter((e) => e.activityTaskStartedEventAttributes).every((e) => e.activityTaskStartedEventAttributes!.attempt === 1)).toBe(true);
    } finally {
      restore();
    }
  }, 90_000);

  it('a retry waits for the attempt still calling the model and reuses its answer; a dead attempt’s lease is taken over', async () => {
    const userId = ctx.userKey(`${ctx.prefix}-lease`);
    await post(ctx, `${ctx.prefix}-lease`, 'c1', [{ id: 'm1', content: 'I live in Lisbon.' }]);
    const slow = new RecordingExtractor('lease-model', { delayMs: 1_500 });
    const deps = { ...ctx.runtime.deps, extractor: slow };
    const heartbeats: string[] = [];
    const hooks = (attemptId: string) => ({ attemptId, heartbeat: (d: Record<string, unknown>) => heartbeats.push(`${attemptId}:${String(d.phase)}`), heartbeatMs: 200, leaseMs: 1_000 });
    const input = { userId, conversationId: 'c1', limit: 200 };
    // Attempt 1 is slow; attempt 2 (its retry after a timeout) starts while 1 still waits for the model.
    const first = extractRunPage(deps, input, hooks('attempt-1'));
    await sleep(300);
    const second = await extractRunPage(deps, input, hooks('attempt-2'));
    const firstPage = await first;
    expect(slow.calls).toHaveLength(1);
    expect(firstPage.reused).toBe(false);
    expect(second.reused).toBe(true);
    expect(second.candidates).toEqual(firstPage.candidates);
    expect(heartbeats).toContain('attempt-1:extracting');
    expect(heartbeats).toContain('attempt-2:awaiting another attempt');
    // A later attempt (or run) over the same page: the stored answer, no call.
    expect((await extractRunPage(deps, input, hooks('attempt-3'))).reused).toBe(true);
    expect(slow.calls).toHaveLength(1);

    // An attempt that died holding the lease: after the lease runs out, the next attempt calls the model.
    await ctx.runtime.pool.query('DELETE FROM extraction_pages WHERE user_id = $1', [userId]);
    const key = { userId, conversationId: 'c1', fromSeq: firstPage.fromSeq, toSeq: firstPage.lastSeq!, variant: `lease-model|${firstPage.timeZone}` };
    expect(await ctx.runtime.deps.extractionRuns.claimPage({ key, attemptId: 'dead-attempt', leaseMs: 800 })).toEqual({ state: 'mine' });
    const t0 = Date.now();
    const taken = await extractRunPage(deps, input, hooks('attempt-4'));
    expect(taken.reused).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
    expect(slow.calls).toHaveLength(2);
  });
});

describe('API waits on workflows', () => {
  it('end?wait=true and POST /memories answer 202 with the workflow id when the workflow takes too long; the work still lands', async () => {
    const user = `${ctx.prefix}-wait`;
    await post(ctx, user, 'c1', [{ id: 'm1', content: 'I have a dog named Biscuit.' }]);
    const config = ctx.runtime.config.reliability;
    const previous = config.workflowWaitMs;
    await ctx.stopWorker();
    config.workflowWaitMs = 1_000;
    try {
      const ended = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {});
      expect(ended.status).toBe(202);
      expect(ended.body).toMatchObject({ workflowId: ctx.extractWorkflowId(user, 'c1'), pending: true });
      expect(ended.body.runId).toBeTruthy();
      const stored = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I prefer tea to coffee', type: 'preference', requestId: 'req-1' });
      expect(stored.status).toBe(202);
      expect(stored.body).toEqual({ workflowId: expect.stringMatching(/^store:/), pending: true });
    } finally {
      config.workflowWaitMs = previous;
      await ctx.startWorker();
    }
    const memories = await poll(() => activeMemories(ctx, user), (m) => m.length >= 2, 30_000, 250);
    expect(memories.map((m) => m.text).join(' | ')).toMatch(/Biscuit/);
    expect(memories.map((m) => m.text).join(' | ')).toMatch(/tea/);
    // The same request id again: the same workflow, now answered with the memory.
    const again = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I prefer tea to coffee', type: 'preference', requestId: 'req-1' });
    expect(again.status).toBe(201);
  });
});
