import { ChromaClient } from 'chromadb';
import { userCollectionName } from '../src/adapters/chroma/user-collections';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capacityOverflow } from '../src/core/decay';
import { DECAY_SCORE_TOLERANCE, sweepDecision, type LifecycleTransition } from '../src/core/lifecycle/sweep';
import type { ImportanceLevel, MemoryStatus, MemoryType } from '../src/core/types';
import { ensureLifecycleSchedules, reinforcementScheduleId, sweepScheduleId } from '../src/lifecycle/lifecycle-schedules';
import { memorySweepWorkflow, type MemorySweepResult } from '../workflows/lifecycle/memory-sweep';
import { weeklyReinforcementWorkflow } from '../workflows/lifecycle/weekly-reinforcement';
import { insertBulkMemories, type BulkMemory } from './support/bulk-memories';
import { createTestContext, OTHER_TENANT_KEY, type TestContext } from './support/harness';
import { mulberry32 } from './support/prng';

const CAP = 60;
const DAY = 86_400_000;
/** The seeded world's "today"; sweeps run 30 / 90 / 365 days after it. */
const T0 = new Date('2026-03-01T00:00:00.000Z');
const at = (days: number) => new Date(T0.getTime() + days * DAY);

let ctx: TestContext;
let chroma: ChromaClient;
const ids = { vectorUsers: [] as string[] };

function uuid(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const LEVEL_RANGES: Record<ImportanceLevel, [number, number]> = { low: [0.1, 0.39], medium: [0.4, 0.69], high: [0.7, 0.84], critical: [0.85, 1] };

/** Tenant-a's id of each bulk-loaded user, by the storage key the rows carry. */
const externalIds = new Map<string, string>();
const worldKey = (u: number) => {
  const external = `${ctx.prefix}-u${String(u).padStart(2, '0')}`;
  const key = ctx.userKey(external);
  externalIds.set(key, external);
  return key;
};
/** The path segment of a bulk-loaded user, whose rows are stored under their (tenant, user) key. */
const ext = (userKey: string) => externalIds.get(userKey) ?? userKey;

/** 64 users: 60 with 50 memories, 4 with 150 (above the cap of 60). Mixed types, levels, statuses, expiries. */
function world(): BulkMemory[] {
  const rand = mulberry32(20260301);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const out: BulkMemory[] = [];
  for (let u = 0; u < 64; u++) {
    const userId = worldKey(u);
    for (let i = 0; i < (u < 4 ? 150 : 50); i++) {
      const level = pick(['low', 'medium', 'medium', 'high', 'critical'] as const);
      const [lo, hi] = LEVEL_RANGES[level];
      const roll = rand();
      const type: MemoryType = roll < 0.1 ? 'event' : roll < 0.15 ? 'instruction' : pick(['fact', 'preference', 'goal', 'pain_point'] as const);
      const s = rand();
      const status: MemoryStatus = s < 0.88 ? 'active' : s < 0.95 ? 'archived' : s < 0.98 ? 'expired' : 'superseded';
      const expires = type === 'event' || (status === 'archived' && rand() < 0.5);
      out.push({
        id: uuid(rand),
        userId,
        text: `${userId} remembers item ${i} about ${pick(['coffee', 'rust', 'hiking', 'allergy', 'budget', 'piano'])} 记忆 ${i}`,
        type,
        status,
        importance: Math.round((lo + rand() * (hi - lo)) * 1000) / 1000,
        importanceLevel: level,
        lastAccessedAt: new Date(T0.getTime() - Math.floor(rand() * 120 * DAY)),
        expiresAt: expires ? new Date(T0.getTime() + Math.floor((rand() * 100 - 20) * DAY)) : null,
      });
    }
  }
  return out;
}

/** A bulk-loaded memory as the sweep left it (the text does not matter to the rules). */
type Row = Omit<BulkMemory, 'text'> & { decayScore: number };

async function readRows(): Promise<Row[]> {
  const { rows } = await ctx.runtime.pool.query(
    `SELECT id, user_id, type, status, importance, importance_level, last_accessed_at, expires_at, decay_score FROM memories WHERE user_id = ANY($1::text[]) ORDER BY id`,
    [[...externalIds.keys()]],
  );
  return rows.map((r) => ({ id: r.id, userId: r.user_id, type: r.type, status: r.status, importance: r.importance, importanceLevel: r.importance_level, lastAccessedAt: r.last_accessed_at, expiresAt: r.expires_at, decayScore: r.decay_score }));
}

/** What a sweep at `now` must do, computed row by row with the pure functions recall uses too. */
function expectedSweep(rows: Row[], now: Date, cap: number) {
  const status = new Map<string, MemoryStatus>();
  const decay = new Map<string, number>();
  const counts = { archived: 0, expired: 0, capacityArchived: 0 };
  const movedByDecayPass = new Set<string>();
  for (const r of rows) {
    const d = sweepDecision(r, now);
    if (d.decay !== null) decay.set(r.id, d.decay);
    if (d.action !== null && r.status === 'active') movedByDecayPass.add(r.id);
    status.set(r.id, d.action === 'archive' ? 'archived' : d.action === 'expire' ? 'expired' : r.status);
    if (d.action === 'archive') counts.archived++;
    if (d.action === 'expire') counts.expired++;
  }
  const byUser = new Map<string, Row[]>();
  for (const r of rows) if (status.get(r.id) === 'active') byUser.set(r.userId, [...(byUser.get(r.userId) ?? []), r]);
  for (const list of byUser.values()) {
    for (const id of capacityOverflow(list, cap)) {
      status.set(id, 'archived');
      counts.capacityArchived++;
    }
  }
  const leftActive = rows.filter((r) => r.status === 'active' && status.get(r.id) !== 'active').length;
  return { status, decay, counts, leftActive, movedByDecayPass };
}

async function runSweep(now: Date, name: string, extra: Record<string, unknown> = {}): Promise<MemorySweepResult> {
  return ctx.runtime.temporal.workflow.execute(memorySweepWorkflow, {
    taskQueue: ctx.taskQueue,
    workflowId: `sweep-test:${ctx.prefix}:${name}`,
    args: [{ now: now.toISOString(), batchSize: 400, maxStepsPerRun: 3, stepBudgetMs: 1, ...extra }],
  });
}

async function eventCounts(workflowId?: string): Promise<Record<string, number>> {
  const { rows } = await ctx.runtime.pool.query<{ action: string; n: number }>(
    `SELECT action, count(*)::int AS n FROM memory_events WHERE user_id LIKE $1 AND ($2::text IS NULL OR workflow_id = $2) GROUP BY action`,
    ['tenant-a:%', workflowId ?? null],
  );
  return Object.fromEntries(rows.map((r) => [r.action, r.n]));
}

/** Postings, index statistics and the vector outbox agree with the statuses. */
async function expectIndexConsistent(): Promise<void> {
  const pool = ctx.runtime.pool;
  const stray = await pool.query(`SELECT count(*)::int AS n FROM memory_terms t JOIN memories m ON m.id = t.memory_id WHERE m.status <> 'active' AND m.user_id LIKE $1`, ['tenant-a:%']);
  expect(stray.rows[0].n).toBe(0);
  const stats = await pool.query(
    `SELECT s.user_id FROM user_index_stats s
      LEFT JOIN (SELECT user_id, count(*)::int AS n, sum(doc_length)::bigint AS len FROM memories WHERE status = 'active' GROUP BY user_id) a USING (user_id)
     WHERE s.user_id LIKE $1 AND (s.doc_count <> COALESCE(a.n, 0) OR s.total_length <> COALESCE(a.len, 0))`,
    ['tenant-a:%'],
  );
  expect(stats.rows).toEqual([]);
  const pending = await pool.query(`SELECT count(*)::int AS n FROM vector_outbox WHERE op = 'delete' AND user_id LIKE $1`, ['tenant-a:%']);
  expect(pending.rows[0].n).toBe(0);
}

/** Which of these ids still have a vector, looked up in each owner's own collection. */
async function vectorIdsPresent(idsToCheck: string[]): Promise<Set<string>> {
  const { rows } = await ctx.runtime.pool.query<{ user_id: string; ids: string[] }>(
    'SELECT user_id, array_agg(id::text) AS ids FROM memories WHERE id = ANY($1::uuid[]) GROUP BY user_id',
    [idsToCheck],
  );
  const present = new Set<string>();
  for (const { user_id: userId, ids: owned } of rows) {
    const collection = await chroma.getCollection({ name: userCollectionName(ctx.runtime.config.chroma.collection, userId), embeddingFunction: null as never }).catch(() => undefined);
    for (const id of (await collection?.get({ ids: owned, include: [] }))?.ids ?? []) present.add(id);
  }
  return present;
}

/** Asserts a sweep did exactly what the pure functions say, in the database and in its result. */
async function sweepAndCheck(now: Date, name: string) {
  const before = await readRows();
  const expected = expectedSweep(before, now, CAP);
  const eventsBefore = await eventCounts();
  const result = await runSweep(now, name);
  const after = await readRows();

  const previous = new Map(before.map((r) => [r.id, r.decayScore]));
  let rewritten = 0;
  for (const r of after) {
    expect(r.status, `${r.id} (${r.type}, ${r.importanceLevel})`).toBe(expected.status.get(r.id));
    // The SQL and computeDecay agree (stored as float4): a score that drifted by more than the
    // tolerance, or a row that left the active set, holds the exact decay; others are untouched.
    const d = expected.decay.get(r.id);
    if (d === undefined) continue;
    const drift = Math.abs(previous.get(r.id)! - d);
    if (drift > DECAY_SCORE_TOLERANCE + 1e-6 || expected.movedByDecayPass.has(r.id)) {
      expect(r.decayScore, r.id).toBeCloseTo(d, 6);
      rewritten++;
    } else if (drift < DECAY_SCORE_TOLERANCE - 1e-6) {
      expect(r.decayScore, r.id).toBe(previous.get(r.id));
    }
  }
  expect(rewritten).toBeGreaterThan(0);
  expect(result.now).toBe(now.toISOString());
  expect(result.counts).toMatchObject({ archived: expected.counts.archived, expired: expected.counts.expired, capacityArchived: expected.counts.capacityArchived, vectorsRemoved: expected.leftActive });
  expect(result.vectorsPending).toBe(false);

  // One audit row per transition, attributed to this workflow.
  const events = await eventCounts(`sweep-test:${ctx.prefix}:${name}`);
  expect(events).toEqual({
    ...(expected.counts.archived + expected.counts.capacityArchived > 0 ? { archive: expected.counts.archived + expected.counts.capacityArchived } : {}),
    ...(expected.counts.expired > 0 ? { expire: expected.counts.expired } : {}),
  });
  const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  expect(total(await eventCounts())).toBe(total(eventsBefore) + total(events));

  // The result lists the transitions (a sample of at most 1000), each one the expected move.
  const moved = expected.counts.archived + expected.counts.expired + expected.counts.capacityArchived;
  expect(result.transitions).toHaveLength(Math.min(moved, 1000));
  expect(result.transitionsTruncated).toBe(moved > 1000);
  for (const t of result.transitions as LifecycleTransition[]) expect(expected.status.get(t.memoryId)).toBe(t.action === 'archive' ? 'archived' : 'expired');
  await expectIndexConsistent();
  return { result, expected, before, after };
}

beforeAll(async () => {
  ctx = await createTestContext({ MAX_ACTIVE_MEMORIES_PER_USER: String(CAP), SWEEP_BATCH_SIZE: '400' });
  const memories = world();
  await insertBulkMemories(ctx.runtime.pool, memories);
  // Real vectors in Chroma for three users' active memories (random embeddings: the sweep only
  // deletes by id, so no model is needed to prove that archived vectors disappear).
  const rand = mulberry32(7);
  ids.vectorUsers = [worldKey(0), worldKey(10), worldKey(20)];
  for (const userId of ids.vectorUsers) {
    const mine = memories.filter((m) => m.userId === userId && m.status === 'active');
    await ctx.runtime.deps.vectors.upsert({ userId, items: mine.map((m) => ({ id: m.id, embedding: Array.from({ length: 384 }, () => rand() - 0.5), type: m.type, createdAt: T0.toISOString() })) });
  }
  const url = new URL(ctx.runtime.endpoints.chromaUrl);
  chroma = new ChromaClient({ host: url.hostname, port: Number(url.port) });
});

afterAll(async () => {
  const q = ctx?.taskQueue;
  if (q) for (const id of [sweepScheduleId(q), reinforcementScheduleId(q)]) await ctx.runtime.temporal.schedule.getHandle(id).delete().catch(() => {});
  await ctx?.close();
});

describe('the daily sweep over thousands of memories across many users', () => {
  it('30 days ahead: archives, expires and caps exactly what the pure rules say, in continue-as-new runs, and removes vectors', async () => {
    const { result, before, expected } = await sweepAndCheck(at(30), 'd30');
    expect(before.length).toBeGreaterThan(3500);
    // The world is built so that every kind of transition happens.
    expect(expected.counts.archived).toBeGreaterThan(50);
    expect(expected.counts.expired).toBeGreaterThan(20);
    expect(expected.counts.capacityArchived).toBeGreaterThan(0);
    // 400 per page, one page per activity, three activities per run: the sweep continued as new.
    expect(result.runs).toBeGreaterThan(3);

    const vectorIds = before.filter((r) => ids.vectorUsers.includes(r.userId) && r.status === 'active').map((r) => r.id);
    const present = await vectorIdsPresent(vectorIds);
    const stillActive = vectorIds.filter((id) => expected.status.get(id) === 'active');
    const retired = vectorIds.filter((id) => expected.status.get(id) !== 'active');
    expect(retired.length).toBeGreaterThan(0);
    expect(retired.filter((id) => present.has(id))).toEqual([]);
    expect(stillActive.filter((id) => !present.has(id))).toEqual([]);
  });

  it('is idempotent: the same sweep again changes nothing and writes no event', async () => {
    const rowsBefore = await readRows();
    const eventsBefore = await eventCounts();
    const again = await runSweep(at(30), 'd30-again');
    expect(again.counts).toMatchObject({ updated: 0, archived: 0, expired: 0, capacityArchived: 0, vectorsRemoved: 0 });
    expect(again.transitions).toEqual([]);
    expect(await readRows()).toEqual(rowsBefore);
    expect(await eventCounts()).toEqual(eventsBefore);
  });

  it('weekly reinforcement refreshes high/critical memories once per instant, audited', async () => {
    const now = at(31);
    const due = (await readRows()).filter((r) => r.status === 'active' && ['high', 'critical'].includes(r.importanceLevel) && r.lastAccessedAt < now);
    expect(due.length).toBeGreaterThan(100);
    const run = (name: string) =>
      ctx.runtime.temporal.workflow.execute(weeklyReinforcementWorkflow, { taskQueue: ctx.taskQueue, workflowId: `reinforce-test:${ctx.prefix}:${name}`, args: [{ now: now.toISOString(), batchSize: 150, maxStepsPerRun: 2, stepBudgetMs: 1 }] });
    const first = await run('w1');
    expect(first.counts.updated).toBe(due.length);
    expect(first.runs).toBeGreaterThan(1);
    const after = new Map((await readRows()).map((r) => [r.id, r]));
    for (const r of due) {
      expect(after.get(r.id)!.lastAccessedAt.toISOString()).toBe(now.toISOString());
      expect(after.get(r.id)!.decayScore).toBe(1);
      expect(after.get(r.id)!.importance).toBeGreaterThanOrEqual(r.importance);
    }
    expect((await eventCounts(`reinforce-test:${ctx.prefix}:w1`)).auto_reinforce).toBe(due.length);
    // The audit's before is the row as it was, its after the row as it is.
    const { rows: events } = await ctx.runtime.pool.query<{ memory_id: string; before: { lastAccessedAt: string; importance: number; decayScore: number }; after: { importance: number } }>(
      `SELECT memory_id, before, after FROM memory_events WHERE workflow_id = $1 AND action = 'auto_reinforce'`,
      [`reinforce-test:${ctx.prefix}:w1`],
    );
    const was = new Map(due.map((r) => [r.id, r]));
    expect(events).toHaveLength(due.length);
    for (const e of events) {
      expect(new Date(e.before.lastAccessedAt).toISOString()).toBe(was.get(e.memory_id)!.lastAccessedAt.toISOString());
      expect(e.before.importance).toBeCloseTo(was.get(e.memory_id)!.importance, 5);
      expect(e.before.decayScore).toBeCloseTo(was.get(e.memory_id)!.decayScore, 5);
      expect(e.after.importance).toBeCloseTo(after.get(e.memory_id)!.importance, 5);
    }
    const second = await run('w2');
    expect(second.counts.updated).toBe(0);
    expect(await eventCounts(`reinforce-test:${ctx.prefix}:w2`)).toEqual({});
  });

  it('90 and 365 days ahead: still exactly the expected transitions', async () => {
    const d90 = await sweepAndCheck(at(90), 'd90');
    expect(d90.expected.counts.archived).toBeGreaterThan(0);
    const d365 = await sweepAndCheck(at(365), 'd365');
    // A year on, only critical memories (reinforced at day 31, half-life 180 days) and standing
    // instructions (never archived for decay) are left.
    const survivors = d365.after.filter((r) => r.status === 'active');
    expect(survivors.length).toBeGreaterThan(0);
    expect(survivors.filter((r) => r.type !== 'instruction' && r.importanceLevel !== 'critical')).toEqual([]);
  });
});

async function postings(id: string): Promise<number> {
  const { rows } = await ctx.runtime.pool.query(`SELECT count(*)::int AS n FROM memory_terms WHERE memory_id = $1`, [id]);
  return rows[0].n;
}

async function docCount(userId: string): Promise<number> {
  const { rows } = await ctx.runtime.pool.query(`SELECT doc_count FROM user_index_stats WHERE user_id = $1`, [userId]);
  return rows[0]?.doc_count ?? 0;
}

describe('explicit restore and forget through the API', () => {
  let restored: { id: string; userId: string };

  it('restores an archived memory: active again, re-indexed, re-embedded, decay reset, audited', async () => {
    const archived = (await readRows()).find((r) => r.status === 'archived' && r.expiresAt === null && r.type === 'fact')!;
    restored = { id: archived.id, userId: archived.userId };
    const countBefore = await docCount(archived.userId);
    expect(await postings(archived.id)).toBe(0);

    const res = await ctx.call('POST', `/v1/users/${ext(archived.userId)}/memories/${archived.id}/restore`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ memory: { id: archived.id, status: 'active', decayScore: 1 }, vectorSynced: true });
    expect(await postings(archived.id)).toBeGreaterThan(0);
    expect(await docCount(archived.userId)).toBe(countBefore + 1);
    expect((await vectorIdsPresent([archived.id])).has(archived.id)).toBe(true);

    // Searchable again: BM25 finds it by its own words.
    const text = (await ctx.runtime.pool.query('SELECT text FROM memories WHERE id = $1', [archived.id])).rows[0].text as string;
    const recall = await ctx.call('POST', `/v1/users/${ext(archived.userId)}/recall`, { query: text, routes: ['bm25'], topK: 50 });
    expect(recall.body.memories.map((m: { id: string }) => m.id)).toContain(archived.id);

    const history = await ctx.call('GET', `/v1/users/${ext(archived.userId)}/memories/${archived.id}/history`);
    expect(history.body.events.at(-1)).toMatchObject({ action: 'restore', actor: 'api', before: { status: 'archived' }, after: { status: 'active' } });
  });

  it('refuses to restore what is not archived (409), what does not exist (404), and another tenant’s user of that id has no such memory', async () => {
    const again = await ctx.call('POST', `/v1/users/${ext(restored.userId)}/memories/${restored.id}/restore`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state');

    const expired = (await readRows()).find((r) => r.status === 'expired')!;
    const refused = await ctx.call('POST', `/v1/users/${ext(expired.userId)}/memories/${expired.id}/restore`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'invalid_state', details: { reason: 'not_archived', status: 'expired' } });

    const missing = await ctx.call('POST', `/v1/users/${ext(restored.userId)}/memories/00000000-0000-4000-8000-000000000000/restore`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');

    const foreign = await ctx.call('POST', `/v1/users/${ext(restored.userId)}/memories/${restored.id}/restore`, undefined, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    expect(foreign.status).toBe(404);
  });

  it('forgets a memory: expired, out of BM25 and Chroma, audited; repeating it is a no-op; 404 for unknown ids', async () => {
    const { id, userId: key } = restored;
    const userId = ext(key);
    const countBefore = await docCount(key);
    const res = await ctx.call('DELETE', `/v1/users/${userId}/memories/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ memory: { id, status: 'expired' }, changed: true, vectorRemoved: true });
    expect(await postings(id)).toBe(0);
    expect(await docCount(key)).toBe(countBefore - 1);
    expect((await vectorIdsPresent([id])).has(id)).toBe(false);
    const history = await ctx.call('GET', `/v1/users/${userId}/memories/${id}/history`);
    expect(history.body.events.at(-1)).toMatchObject({ action: 'expire', actor: 'api', before: { status: 'active' }, after: { status: 'expired' } });

    const eventsBefore = history.body.events.length;
    const again = await ctx.call('DELETE', `/v1/users/${userId}/memories/${id}`);
    expect(again.status).toBe(200);
    expect(again.body.changed).toBe(false);
    expect((await ctx.call('GET', `/v1/users/${userId}/memories/${id}/history`)).body.events).toHaveLength(eventsBefore);

    const missing = await ctx.call('DELETE', `/v1/users/${userId}/memories/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);
    const notUuid = await ctx.call('DELETE', `/v1/users/${userId}/memories/not-a-uuid`);
    expect(notUuid.status).toBe(400);
  });

  it('lists memories by status and type, paged', async () => {
    const userId = `${ctx.prefix}-u01`;
    const { rows } = await ctx.runtime.pool.query(`SELECT count(*)::int AS n FROM memories WHERE user_id = $1 AND status = 'archived'`, [ctx.userKey(userId)]);
    const total = rows[0].n as number;
    expect(total).toBeGreaterThan(4);
    const page1 = await ctx.call('GET', `/v1/users/${userId}/memories?status=archived&limit=3&offset=0`);
    const page2 = await ctx.call('GET', `/v1/users/${userId}/memories?status=archived&limit=3&offset=3`);
    expect(page1.body.total).toBe(total);
    expect(page1.body.memories).toHaveLength(3);
    const ids1 = page1.body.memories.map((m: { id: string }) => m.id);
    const ids2 = page2.body.memories.map((m: { id: string }) => m.id);
    expect(ids1.filter((id: string) => ids2.includes(id))).toEqual([]);
    expect([...page1.body.memories, ...page2.body.memories].every((m: { status: string }) => m.status === 'archived')).toBe(true);
    const events = await ctx.call('GET', `/v1/users/${userId}/memories?status=archived&type=event`);
    expect(events.body.memories.every((m: { type: string }) => m.type === 'event')).toBe(true);
    expect((await ctx.call('GET', `/v1/users/${userId}/memories?status=forgotten`)).status).toBe(400);
  });

  it('restores an archived fact when the user states it again word for word (restore on a strong explicit match)', async () => {
    const userId = `${ctx.prefix}-match`;
    const say = async (conversationId: string) => {
      await ctx.call('POST', `/v1/users/${userId}/conversations/${conversationId}/messages`, { messages: [{ id: 'm1', role: 'user', content: '我对花生过敏，吃了会起疹子。' }] });
      const end = await ctx.call('POST', `/v1/users/${userId}/conversations/${conversationId}/end?wait=true`, {});
      expect(end.status).toBe(200);
      return end.body.result.decisions as { action: string; memoryId?: string }[];
    };
    const created = (await say('c1')).find((d) => d.action === 'create')!;
    expect(created.memoryId).toBeDefined();
    const id = created.memoryId!;
    const key = ctx.userKey(userId);
    await ctx.runtime.deps.unitOfWork.forUser({ userId: key, work: (tx) => tx.memories.setStatus({ userId: key, id, status: 'archived', at: new Date() }) });
    expect((await ctx.call('GET', `/v1/users/${userId}/memories/${id}`)).body.memory.status).toBe('archived');

    const decisions = await say('c2');
    expect(decisions.find((d) => d.memoryId === id)?.action).toBe('reinforce');
    const memory = (await ctx.call('GET', `/v1/users/${userId}/memories/${id}`)).body.memory;
    expect(memory).toMatchObject({ status: 'active', frequencyCount: 2 });
    const history = (await ctx.call('GET', `/v1/users/${userId}/memories/${id}/history`)).body.events as { action: string; actor: string }[];
    expect(history.map((e) => e.action)).toEqual(expect.arrayContaining(['restore', 'reinforce']));
    expect(history.find((e) => e.action === 'restore')!.actor).toBe('workflow:extractMemoriesWorkflow');
    expect((await vectorIdsPresent([id])).has(id)).toBe(true);
  });
});

describe('schedules', () => {
  it('are created idempotently at worker start, updated when their timezone changes, and run the sweep', async () => {
    const q = ctx.taskQueue;
    const client = ctx.runtime.temporal;
    expect(await ctx.runtime.ensureSchedules()).toMatchObject({ [sweepScheduleId(q)]: 'created', [reinforcementScheduleId(q)]: 'created' });
    expect(await ctx.runtime.ensureSchedules()).toMatchObject({ [sweepScheduleId(q)]: 'unchanged', [reinforcementScheduleId(q)]: 'unchanged' });

    const sweep = await client.schedule.getHandle(sweepScheduleId(q)).describe();
    expect(sweep.action).toMatchObject({ workflowType: 'memorySweepWorkflow', taskQueue: q });
    expect(sweep.spec.timezone ?? 'UTC').toBe('UTC');
    expect(sweep.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 3 }], minute: [{ start: 0 }] });
    const weekly = await client.schedule.getHandle(reinforcementScheduleId(q)).describe();
    expect(weekly.action).toMatchObject({ workflowType: 'weeklyReinforcementWorkflow', taskQueue: q });
    expect(weekly.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 4 }], minute: [{ start: 0 }], dayOfWeek: [{ start: 'MONDAY' }] });
    expect(weekly.info.nextActionTimes[0]!.getUTCDay()).toBe(1);

    expect(await ensureLifecycleSchedules(client, { taskQueue: q, timezone: 'Asia/Shanghai' })).toEqual({ [sweepScheduleId(q)]: 'updated', [reinforcementScheduleId(q)]: 'updated' });
    const moved = await client.schedule.getHandle(sweepScheduleId(q)).describe();
    expect(moved.spec.timezone).toBe('Asia/Shanghai');
    // 03:00 in Shanghai is 19:00 UTC.
    expect(moved.info.nextActionTimes[0]!.getUTCHours()).toBe(19);
    expect(await ctx.runtime.ensureSchedules()).toMatchObject({ [sweepScheduleId(q)]: 'updated' });

    // The schedule's action really starts a sweep on this task queue (now = the trigger time).
    const handle = client.schedule.getHandle(sweepScheduleId(q));
    await handle.trigger();
    let workflowId: string | undefined;
    for (let i = 0; i < 100 && !workflowId; i++) {
      workflowId = (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId;
      if (!workflowId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(workflowId).toMatch(new RegExp(`^${sweepScheduleId(q)}`));
    const result = (await client.workflow.getHandle(workflowId!).result()) as MemorySweepResult;
    expect(result.counts.scanned).toBeGreaterThan(0);
    expect(result.vectorsPending).toBe(false);
  });
});
