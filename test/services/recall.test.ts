import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/errors';
import type { NewMemory } from '../../src/core/ports/memory';
import type { MemoryType } from '../../src/core/types';
import { buildRecallResult, planMemoryRoutes, rankFused, recall, type RecallDeps } from '../../src/recall/recall';
import { fakeDeps } from '../support/fakes';
import { newMemory } from '../support/seed';

const user = 'tenant-a:USER';
const now = new Date('2026-06-10T00:00:00Z');
/** The memory routes only: the episodic ones read PostgreSQL directly and have their own integration tests. */
const MEMORY_ROUTES = ['ann', 'bm25', 'recent', 'important', 'type'] as const;

function memory(id: string, text: string, over: Partial<NewMemory> = {}): NewMemory {
  return newMemory({ id, userId: user, text, lastAccessedAt: now, ...over });
}

/** Fakes seeded with memories (rows, postings and vectors), and message, episode and settings stores that must not be touched. */
async function seeded(items: NewMemory[]) {
  const f = fakeDeps();
  await f.deps.unitOfWork.forUser({ userId: user, work: async (tx) => void (await Promise.all(items.map((m) => tx.memories.insert(m)))) });
  for (const m of items) {
    const [embedding] = await f.embedder.embedDocuments({ texts: [m.text] });
    await f.vectors.upsert({ userId: user, items: [{ id: m.id, embedding: embedding!, type: m.type, createdAt: m.createdAt.toISOString() }] });
  }
  const offline = () => Promise.reject(new Error('no PostgreSQL in a unit test'));
  const untouched = <T extends object>(): T => new Proxy({}, { get: () => offline }) as T;
  const deps: RecallDeps = { ...f.deps, messageSearch: untouched(), episodes: untouched(), settings: { get: offline, timeZone: offline, update: offline } };
  return { ...f, deps, unitOfWork: f.deps.unitOfWork };
}

const ask = (deps: RecallDeps, query: string, options: Parameters<typeof recall>[3] = {}) => recall(deps, user, query, { now, routes: [...MEMORY_ROUTES], ...options });

describe('recall: route planning', () => {
  it('runs ANN only with a query, recency only when asked for, the type route only with types', () => {
    expect(planMemoryRoutes('')).toEqual(['bm25', 'important']);
    expect(planMemoryRoutes('peanuts')).toEqual(['ann', 'bm25', 'important']);
    expect(planMemoryRoutes('what did we say last time')).toEqual(['ann', 'bm25', 'recent', 'important']);
    expect(planMemoryRoutes('what food do I like')).toEqual(['ann', 'bm25', 'important', 'type']);
    expect(planMemoryRoutes('peanuts', { types: ['goal'] })).toEqual(['ann', 'bm25', 'important', 'type']);
    expect(planMemoryRoutes('peanuts', { routes: ['bm25', 'recent'] })).toEqual(['bm25', 'recent']);
  });
});

describe('recall: route failures', () => {
  it('reports a failed route and still answers from the others', async () => {
    const { deps, vectors } = await seeded([memory('a', 'I am allergic to peanuts')]);
    vectors.down = true;
    const r = await ask(deps, 'peanuts allergy');
    expect(r.error).toEqual({ code: 'vectorStoreUnavailable', message: 'ann: Chroma unreachable', routes: ['ann'] });
    expect(r.routes.find((x) => x.route === 'ann')).toMatchObject({ ok: false, hits: 0 });
    expect(r.routes.find((x) => x.route === 'bm25')).toMatchObject({ ok: true, hits: 1 });
    expect(r.memories.map((m) => m.id)).toEqual(['a']);
    expect(r.context.userPrefix).toContain('peanuts');
  });

  it('times a slow route out with dependencyTimeout instead of waiting for it', async () => {
    const { deps, store } = await seeded([memory('a', 'I am allergic to peanuts')]);
    store.onCall = (method) => (method === 'bm25' ? new Promise<void>(() => {}) : undefined);
    const t0 = Date.now();
    const r = await ask(deps, 'peanuts allergy', { timeoutMs: 50 });
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(r.error?.code).toBe('dependencyTimeout');
    expect(r.error?.routes).toEqual(['bm25']);
    expect(r.memories.map((m) => m.id)).toEqual(['a']);
  });

  it('folds several failures into one error: the first failure decides the code, all are named', async () => {
    const { deps, vectors, store } = await seeded([memory('a', 'I am allergic to peanuts')]);
    vectors.down = true;
    store.onCall = (method) => {
      if (method === 'mostImportant') throw new Error('connection reset');
    };
    const r = await ask(deps, 'peanuts allergy');
    expect(r.error).toEqual({ code: 'vectorStoreUnavailable', message: 'ann: Chroma unreachable; important: connection reset', routes: ['ann', 'important'] });
    expect(r.memories.map((m) => m.id)).toEqual(['a']);
  });

  it('reports a failed hydration as "hydrate" and returns an empty context rather than throwing', async () => {
    const { deps, store } = await seeded([memory('a', 'I am allergic to peanuts')]);
    store.onCall = (method) => {
      if (method === 'getActive') throw new Error('pool exhausted');
    };
    const r = await ask(deps, 'peanuts');
    expect(r.error).toMatchObject({ code: ErrorCode.internal, routes: ['hydrate'] });
    expect(r.memories).toEqual([]);
    expect(r.context).toEqual({ system: '', userPrefix: '' });
  });

  it('reports a rewrite asked for without an LLM, and answers from the original query', async () => {
    const { deps } = await seeded([memory('a', 'I am allergic to peanuts')]);
    const r = await ask(deps, 'peanuts', { rewrite: true, recentMessages: ['we talked about food'] });
    expect(r.error).toMatchObject({ code: 'llmUnavailable', routes: ['rewrite'] });
    expect(r.rewrittenQueries).toEqual([]);
    expect(r.memories.map((m) => m.id)).toEqual(['a']);
  });
});

describe('recall: fusion', () => {
  it('ranks a memory found by two routes above memories found by one', async () => {
    const { deps } = await seeded([memory('a', 'green tea every morning'), memory('b', 'tea ceremony in Kyoto'), memory('c', 'morning run by the river')]);
    const r = await ask(deps, 'tea morning', { routes: ['ann', 'bm25'] });
    expect(r.memories[0]).toMatchObject({ id: 'a', routes: ['ann', 'bm25'] });
    expect(r.memories.map((m) => m.id).sort()).toEqual(['a', 'b', 'c']);
  });

  it('never returns a memory that is no longer active, even while its vector is still indexed', async () => {
    const f = await seeded([memory('a', 'I live in Berlin'), memory('b', 'I live in Munich')]);
    await f.unitOfWork.forUser({ userId: user, work: (tx) => tx.memories.setStatus({ userId: user, id: 'a', status: 'superseded', at: now, supersededBy: 'b' }) });
    expect(f.vectors.byUser.get(user)?.has('a')).toBe(true);
    const r = await ask(f.deps, 'where do I live');
    expect(r.memories.map((m) => m.id)).toEqual(['b']);
  });

  it('puts memories said on the dates the query names first (rankFused)', () => {
    const at = (iso: string) => memory(iso, `note ${iso}`, { createdAt: new Date(iso) });
    const inRange = at('2026-06-02T10:00:00Z');
    const outside = at('2026-05-01T10:00:00Z');
    const ranked = rankFused({
      fused: [
        { id: outside.id, score: 0.03, routes: ['bm25'], ranks: { bm25: 1 } },
        { id: inRange.id, score: 0.01, routes: ['time'], ranks: { time: 1 } },
      ] as never,
      hydrated: [outside, inRange],
      now,
      maxResults: 8,
      ranges: [{ text: 'June 2', start: new Date('2026-06-02T00:00:00Z'), end: new Date('2026-06-03T00:00:00Z') }] as never,
    });
    expect(ranked.map((r) => r.memory.id)).toEqual([inRange.id, outside.id]);
  });
});

describe('recall: budget and formatting', () => {
  const many = (n: number, type: MemoryType = 'fact') =>
    Array.from({ length: n }, (_, i) => memory(`m${String(i).padStart(2, '0')}`, `coffee note number ${i}: the user drinks a flat white with oat milk at the corner cafe`, { type }));

  it('never exceeds the token budget, and lists only what made it into the context', async () => {
    const { deps } = await seeded(many(12));
    const wide = await ask(deps, 'coffee', { tokenBudget: 2000, topK: 12 });
    const tight = await ask(deps, 'coffee', { tokenBudget: 80, topK: 12 });
    expect(wide.tokens).toBeLessThanOrEqual(2000);
    expect(tight.tokens).toBeLessThanOrEqual(80);
    expect(tight.memories.length).toBeGreaterThan(0);
    expect(tight.memories.length).toBeLessThan(wide.memories.length);
    for (const m of tight.memories) expect(tight.context.userPrefix).toContain(m.text.slice(0, 20));
  });

  it('always considers the global standing instructions first', async () => {
    const { deps } = await seeded([...many(6), memory('i1', 'Always answer in English', { type: 'instruction', importance: 0.9 })]);
    const r = await ask(deps, 'coffee', { tokenBudget: 120 });
    expect(r.memories[0]!.id).toBe('i1');
    expect(r.context.system).toContain('Always answer in English');
  });

  it('buildRecallResult folds no error when every route answered', () => {
    const r = buildRecallResult({ ranked: [], instructions: [], exchanges: [], fusedById: new Map(), budget: 100, routes: [], failures: [], ranges: [] });
    expect(r).toEqual({ context: { system: '', userPrefix: '' }, memories: [], tokens: 0, routes: [], pastExchanges: [], injectedMessageIds: [] });
  });
});
