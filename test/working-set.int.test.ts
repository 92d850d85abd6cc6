import { describe, expect, it } from 'vitest';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { MEMORY_TYPES } from '../src/core/memory-types';
import { recall, type RecallDeps } from '../src/recall/recall';
import { useTestContext } from './support/harness';
import { seedMemories, type SeedMemory } from './support/seed';
import { heldAndSql as holdUser, until } from './support/working-set';

// A recall that reads a held working set must answer exactly what the SQL statements answer, and
// see every write committed before it started, whoever made it (migration 1797600000000).
const stack = useTestContext({ RECALL_TIMEOUT_MS: '20000' });

const NOW = new Date('2026-06-10T00:00:00Z');

const MEMORIES: SeedMemory[] = [
  { text: '我对花生过敏，吃了会起疹子', type: 'fact', importance: 0.95 },
  { text: 'I prefer oat milk in my coffee', type: 'preference', importance: 0.6 },
  { text: '以后回复用中文', type: 'instruction', importance: 0.9 },
  { text: 'Always answer in short bullet points', type: 'instruction', importance: 0.8, scope: 'task' },
  { text: 'payment-svc times out under load since Monday', type: 'pain_point', importance: 0.8 },
  { text: '我想在年底前跑完一次半程马拉松', type: 'goal', importance: 0.7 },
  { text: 'My sister Anna lives in Lisbon and works as a nurse', type: 'fact', importance: 0.5 },
  { text: '上周去杭州出差，见了客户王总', type: 'event', importance: 0.4, at: new Date('2026-06-03T09:00:00Z') },
  { text: 'Decided to move the team standup to 10am', type: 'decision', importance: 0.5 },
  { text: 'The free trial of the gym ended yesterday', type: 'event', importance: 0.3, expiresAt: new Date('2026-06-05T00:00:00Z') },
  { text: '我不喝咖啡，只喝绿茶', type: 'preference', importance: 0.6 },
  { text: 'Allergic to penicillin since childhood', type: 'fact', importance: 0.9 },
  { text: 'Learning Rust in the evenings, stuck on lifetimes', type: 'pain_point', importance: 0.5 },
  { text: 'Old address: 12 Baker Street', type: 'fact', importance: 0.5, status: 'archived' },
  { text: '每天早上七点起床跑步五公里', type: 'fact', importance: 0.5 },
  { text: 'Wants to visit Kyoto in the autumn with the kids', type: 'goal', importance: 0.6 },
];

/** Every memory said at its own minute: the SQL orders equal keys in no promised order, so the comparison holds no ties. */
const SPREAD: SeedMemory[] = MEMORIES.map((m, i) => ({ ...m, at: m.at ?? new Date(Date.UTC(2026, 5, 1, 8, i)) }));

const QUERIES: { text: string; recentMessages?: string[] }[] = [
  { text: '我能吃花生酱吗' },
  { text: 'what milk should I order for my coffee?' },
  { text: 'payment-svc 又超时了怎么办', recentMessages: ['昨天上线以后', 'the pool was too small'] },
  { text: '上周出差见了谁？' },
  { text: 'any allergies I should tell the doctor about?' },
  { text: '最近有什么目标' },
  { text: 'what did we decide about the standup' },
  { text: 'tell me about my sister' },
];

/** The recall deps reading through a fresh cache once it holds the user, and the same deps reading only through SQL. */
const heldAndSql = (userId: string) => holdUser(stack.ctx.runtime.deps, stack.ctx.runtime.pool, userId, NOW);

const answer = (r: Awaited<ReturnType<typeof recall>>) => ({ memories: r.memories.map((m) => [m.id, m.text, m.routes]), context: r.context, error: r.error });

async function texts(deps: RecallDeps, userId: string, query: string): Promise<string[]> {
  const r = await recall(deps, userId, query, { now: NOW });
  expect(r.error).toBeUndefined();
  return r.memories.map((m) => m.text);
}

describe('recall from a held working set', () => {
  it('answers every query exactly as the SQL statements do', { timeout: 180_000 }, async () => {
    const key = stack.ctx.userKey(`${stack.ctx.prefix}-same`);
    await seedMemories(stack.ctx.runtime.deps, key, SPREAD);
    const { held, sql, cache } = await heldAndSql(key);
    const before = cache.reads.held;
    for (const q of QUERIES) {
      const options = { now: NOW, ...(q.recentMessages ? { recentMessages: q.recentMessages } : {}) };
      const bySql = await recall(sql, key, q.text, options);
      const byHeld = await recall(held, key, q.text, options);
      expect(answer(byHeld), q.text).toEqual(answer(bySql));
      expect(bySql.memories.length, q.text).toBeGreaterThan(0);
    }
    expect(cache.reads.held - before).toBe(QUERIES.length);
  });

  it('scores BM25 exactly where the SQL cuts a common term: the same hits and scores as the SQL that reads every posting', { timeout: 300_000 }, async () => {
    const { ctx } = stack;
    const key = ctx.userKey(`${ctx.prefix}-common`);
    const places = ['Lisbon', 'Kyoto', 'Denver', 'Oslo', 'Hanoi', 'Quito', 'Accra', 'Perth'];
    const drinks = ['oat milk', 'green tea', 'espresso', 'cocoa', 'lemonade'];
    // "coffee" in 620 memories: past the SQL's 500 postings per common term (bm25-sql.ts).
    await seedMemories(
      ctx.runtime.deps,
      key,
      Array.from({ length: 620 }, (_, i) => ({ text: `coffee note ${i}: ${drinks[i % 5]} in ${places[i % 8]}${i % 7 === 0 ? ' with coffee friends' : ''}`, type: 'fact' as const, at: new Date(Date.UTC(2026, 4, 1, 0, i)) })),
    );
    const { cache } = await heldAndSql(key);
    const deps = ctx.runtime.deps;
    const reads = () => cache.forRequest(key, NOW, { lists: deps.recallLists!, memories: deps.memories });
    for (const query of ['coffee in Lisbon', 'coffee with friends', 'espresso coffee Kyoto', 'coffee']) {
      const tokens = tokenizeForIndex(query);
      const held = await reads().bm25WithMemories({ userId: key, now: NOW, tokens, k: 20 });
      const exact = await deps.memories.bm25({ userId: key, tokens, k: 20, types: [...MEMORY_TYPES] });
      expect(held.hits.map((h) => h.id), query).toEqual(exact.map((h) => h.id));
      held.hits.forEach((h, i) => expect(h.score, query).toBeCloseTo(exact[i]!.score, 9));
    }
  });

  it('sees inserts, updates, retirements and deletions made by any connection, and nothing uncommitted', { timeout: 180_000 }, async () => {
    const { ctx } = stack;
    const key = ctx.userKey(`${ctx.prefix}-fresh`);
    await seedMemories(ctx.runtime.deps, key, SPREAD.slice(0, 10));
    const { held, cache } = await heldAndSql(key);
    const pool = ctx.runtime.pool;
    expect(await texts(held, key, 'tell me about my sister')).toContain('My sister Anna lives in Lisbon and works as a nurse');

    // An insert by the write path.
    await seedMemories(ctx.runtime.deps, key, [{ text: 'My brother Tom plays the cello in Vienna', type: 'fact', importance: 0.6 }]);
    expect(await texts(held, key, 'what does my brother play?')).toContain('My brother Tom plays the cello in Vienna');

    // An update still uncommitted in one connection, and a retirement by another that starts
    // later and commits first: transactions commit out of order, and the recall in between must
    // not take the later one's commit for "everything before it is read".
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE memories SET importance = 0.99, importance_level = 'critical' WHERE user_id = $1 AND text LIKE 'Decided to move%'`, [key]);
      await pool.query(`UPDATE memories SET status = 'archived' WHERE user_id = $1 AND text LIKE 'My sister Anna%'`, [key]);
      const during = await recall(held, key, 'tell me about my sister', { now: NOW });
      expect(during.memories.map((m) => m.text)).not.toContain('My sister Anna lives in Lisbon and works as a nurse');
      const importantDuring = await recall(held, key, 'anything important?', { now: NOW, routes: ['important'] });
      expect(importantDuring.memories.map((m) => m.text)).not.toContain('Decided to move the team standup to 10am');
      await other.query('COMMIT');
    } finally {
      other.release();
    }
    // Committed after the recall above had read: the next recall must still see it.
    const importantAfter = await recall(held, key, 'anything important?', { now: NOW, routes: ['important'] });
    expect(importantAfter.memories.map((m) => m.text)).toContain('Decided to move the team standup to 10am');
    expect(cache.isHeld(key)).toBe(true);

    // A deletion leaves no row to read: the set is dropped, and recall reads through SQL.
    await pool.query(`DELETE FROM memory_entities WHERE memory_id IN (SELECT id FROM memories WHERE user_id = $1 AND text LIKE 'My brother Tom%')`, [key]);
    await pool.query(`DELETE FROM memory_terms WHERE user_id = $1 AND memory_id IN (SELECT id FROM memories WHERE user_id = $1 AND text LIKE 'My brother Tom%')`, [key]);
    await pool.query(`DELETE FROM vector_outbox WHERE user_id = $1`, [key]);
    await pool.query(`DELETE FROM memories WHERE user_id = $1 AND text LIKE 'My brother Tom%'`, [key]);
    expect(await texts(held, key, 'what does my brother play?')).not.toContain('My brother Tom plays the cello in Vienna');
    // Loaded again at once, without it.
    await until(() => cache.isHeld(key));
    expect(await texts(held, key, 'what does my brother play?')).not.toContain('My brother Tom plays the cello in Vienna');
  });

  it('drops a purged user, and never shows their memories to the same id registered again', { timeout: 180_000 }, async () => {
    const { ctx, client } = stack;
    const user = `${ctx.prefix}-purged`;
    const key = ctx.userKey(user);
    await seedMemories(ctx.runtime.deps, key, [{ text: 'My locker code is 4711', type: 'fact', importance: 0.9 }]);
    const { held, cache } = await heldAndSql(key);
    expect(await texts(held, key, 'what is my locker code?')).toContain('My locker code is 4711');
    await client.purgeUser(user, { wait: true });
    await seedMemories(ctx.runtime.deps, key, [{ text: 'I just joined, nothing stored yet', type: 'fact' }]);
    expect(await texts(held, key, 'what is my locker code?')).not.toContain('My locker code is 4711');
    await until(() => cache.isHeld(key));
    expect(await texts(held, key, 'what is my locker code?')).not.toContain('My locker code is 4711');
  });
});
