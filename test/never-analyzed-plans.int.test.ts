import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BM25_POSTINGS_PER_TERM, BM25_RESCORED_MIN, BM25_RESCORED_PER_K } from '../src/adapters/postgres/bm25-sql';
import { PostgresConversationRepository } from '../src/adapters/postgres/conversation-repository';
import { PostgresEpisodeStore } from '../src/adapters/postgres/episode-repository';
import { PostgresLifecycleRepository } from '../src/adapters/postgres/lifecycle-repository';
import { PostgresMemoryRepository } from '../src/adapters/postgres/memory-repository';
import { PostgresMessageSearch } from '../src/adapters/postgres/message-search-repository';
import { inUserTransaction } from '../src/adapters/postgres/pool';
import { PostgresRetentionRepository } from '../src/adapters/postgres/retention-repository';
import { PostgresRecallLists } from '../src/adapters/postgres/recall-lists-repository';
import { PostgresTimeRoute } from '../src/adapters/postgres/time-route-repository';
import { PostgresWorkingSetSource } from '../src/adapters/postgres/working-set-repository';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import type { MemoryType } from '../src/core/types';
import { insertBulkMemories, type BulkMemory } from './support/bulk-memories';
import { createTestContext, type TestContext } from './support/harness';
import { mulberry32 } from './support/prng';
import { capturing as capturingPool, tuplesReadBy, pagesVisitedInTransaction } from './support/statements';
import { indexedOnThisThread } from './support/indexed-messages';
import { joinComparisons, rowsRead, type PlanNode } from './support/plans';

/**
 * Recall's reads on tables no ANALYZE has ever seen (issue #22): a new deployment before
 * autovacuum's first pass, which the HTTP sweep bench reproduces. Unlike a user who arrived after
 * an ANALYZE (test/bm25-plans.int.test.ts), the planner has no statistics at all here and takes
 * the user for a handful of rows, so reading all of them and sorting looked as cheap as reading
 * the first k of an ordered index. The measure is tuples read (scan counters, functions'
 * statements included), not time: each ordered read must stay near k, not the user's size.
 */

let ctx: TestContext;
let pool: pg.Pool;
let userId: string;
/** The size of the HTTP sweep bench's users, where these plans were seen; others share the tables. */
const COUNT = 10_000;
const OTHERS = 10;
const PER_OTHER = 500;
const CONVERSATIONS = 60;
const AT = new Date('2026-03-01T09:00:00Z');
const DAY = 86_400_000;
const VOCABULARY = Array.from({ length: 24 }, (_, i) => `word${String.fromCharCode(97 + i)}`);
const TYPES: MemoryType[] = ['fact', 'preference', 'goal', 'pain_point', 'event'];
const QUERY = 'worda wordb wordc wordd';

const capturing = () => capturingPool(pool);

beforeAll(async () => {
  ctx = await createTestContext();
  pool = ctx.runtime.pool;
  for (const table of ['memories', 'memory_terms', 'memory_term_df', 'user_index_stats', 'messages', 'message_terms', 'message_term_df']) {
    await pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  }
  userId = ctx.userKey('never-analyzed');
  await pool.query(`INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, 'tenant-a', 'never-analyzed') ON CONFLICT DO NOTHING`, [userId]);
  const rand = mulberry32(17);
  const rows: BulkMemory[] = Array.from({ length: COUNT }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    userId,
    // Skewed draws: the first words are in most memories, as common words are in real chat.
    text: Array.from({ length: 8 }, () => VOCABULARY[Math.floor(rand() ** 2 * VOCABULARY.length)]!).join(' '),
    type: TYPES[i % TYPES.length]!,
    status: 'active',
    importance: Math.round(rand() * 100) / 100,
    importanceLevel: 'medium',
    // Said over 90 days, so a day holds a few dozen of them.
    lastAccessedAt: new Date(AT.getTime() - Math.floor(rand() * 90 * DAY)),
    expiresAt: null,
  }));
  const others: BulkMemory[] = Array.from({ length: OTHERS * PER_OTHER }, (_, i) => ({ ...rows[i]!, id: `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`, userId: ctx.userKey(`other-${i % OTHERS}`) }));
  for (let i = 0; i < others.length; i += 1000) await insertBulkMemories(pool, others.slice(i, i + 1000));
  for (let i = 0; i < COUNT; i += 1000) await insertBulkMemories(pool, rows.slice(i, i + 1000));
  for (let c = 0; c < CONVERSATIONS; c += 1) {
    const messages = Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: `${VOCABULARY[i % 24]} ${VOCABULARY[(i * 7 + c) % 24]}`, at: new Date(AT.getTime() + (c * 40 + i) * 1000), truncated: false }));
    await inUserTransaction(pool, userId, (tx) => new PostgresConversationRepository(tx).append({ userId, conversationId: `c${c}`, messages: indexedOnThisThread(messages) }));
  }
}, 300_000);

afterAll(async () => {
  await ctx?.close();
});

describe('recall on tables never analyzed', () => {
  it('the scenario holds: no statistics on the memories or their postings', async () => {
    const { rows } = await pool.query<{ relname: string; analyzed: boolean }>(
      `SELECT relname, (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL) AS analyzed FROM pg_stat_user_tables WHERE relname IN ('memories', 'memory_terms')`,
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.analyzed, r.relname).toBe(false);
  });

  it('the recent route reads the first k of its index, not every memory of the user', async () => {
    const { db, last } = capturing();
    const ids = await new PostgresMemoryRepository(db).recent({ userId, k: 10 });
    expect(ids).toHaveLength(10);
    expect(await tuplesReadBy(pool, last(), 'memories')).toBeLessThanOrEqual(20);
  });

  it("the short lists' recent branch: the same ids, read the same way", async () => {
    const { db, last } = capturing();
    const lists = await new PostgresRecallLists(db).memoryLists({ userId, now: AT, recent: { k: 10 } });
    expect(lists.recent).toEqual(await new PostgresMemoryRepository(pool).recent({ userId, k: 10 }));
    // Every memory of the recent list is loaded with it (none expired here).
    expect(lists.memories.map((m) => m.id).sort()).toEqual([...lists.recent].sort());
    expect(await tuplesReadBy(pool, last(), 'memories')).toBeLessThanOrEqual(40);
  });

  it('the time route reads the memories of the day it names, not every memory of the user', async () => {
    const { db, last } = capturing();
    const start = new Date(AT.getTime() - 30 * DAY);
    const ids = await new PostgresTimeRoute(db).memoriesSaidIn({ userId, ranges: [{ start, end: new Date(start.getTime() + DAY) }], k: 20, now: AT });
    expect(ids.length).toBeGreaterThan(0);
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM memories WHERE user_id = $1 AND created_at >= $2 AND created_at < $3`, [userId, start, new Date(start.getTime() + DAY)]);
    expect(await tuplesReadBy(pool, last(), 'memories')).toBeLessThanOrEqual(Number(rows[0]!.n) + 5);
  });

  it("the follow-up's pain points: the best k of the type, not every memory of it", async () => {
    const { db, last } = capturing();
    const painPoints = await new PostgresMemoryRepository(db).byTypes({ userId, types: ['pain_point'], k: 20, now: AT });
    expect(painPoints).toHaveLength(20);
    expect(painPoints.every((m) => m.type === 'pain_point')).toBe(true);
    for (let i = 1; i < painPoints.length; i += 1) expect(painPoints[i - 1]!.importance).toBeGreaterThanOrEqual(painPoints[i]!.importance);
    expect(await tuplesReadBy(pool, last(), 'memories')).toBeLessThanOrEqual(40);
  });

  it("the working set's load reads each of the user's memories and postings once, not the postings once per memory", async () => {
    const { db, last } = capturing();
    const loaded = await new PostgresWorkingSetSource(db).load(userId, 50_000);
    expect(loaded === 'tooMany' ? 0 : loaded.rows.length).toBe(COUNT);
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM memory_terms WHERE user_id = $1`, [userId]);
    // Through memory_terms' memory_id index, one probe per memory. With the user's id in the
    // probe the planner read the user's postings range once per memory (10k × ~60k: the load
    // outlived the pool's query timeout in the bench).
    expect(await tuplesReadBy(pool, last(), 'memory_terms')).toBeLessThanOrEqual(Number(rows[0]!.n) + 10);
    expect(await tuplesReadBy(pool, last(), 'memories')).toBeLessThanOrEqual(COUNT + 10);
  });

  it("the working set's changes read the rows written since the horizon and their postings only", async () => {
    const source = new PostgresWorkingSetSource(pool);
    const before = await source.changes(userId, AT, 0n, 1);
    const changed = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'];
    await pool.query(`UPDATE memories SET importance = 0.42 WHERE user_id = $1 AND id = ANY($2::uuid[])`, [userId, changed]);
    const { db, last } = capturing();
    const changes = await new PostgresWorkingSetSource(db).changes(userId, AT, before.mark.horizon, 500);
    expect(changes.rows.map((r) => r.memory.id).sort()).toEqual(changed);
    expect(changes.rows.every((r) => r.postings.terms.length > 0)).toBe(true);
    expect(await tuplesReadBy(pool, last(), 'memories')).toBeLessThanOrEqual(changed.length + 10);
    expect(await tuplesReadBy(pool, last(), 'memory_terms')).toBeLessThanOrEqual(changed.length * 8 + 10);
  });

  it("memory BM25 reads one bounded cut of each common term's postings, in impact order", async () => {
    const { db, last } = capturing();
    const hits = await new PostgresMemoryRepository(db).bm25({ userId, tokens: tokenizeForIndex(QUERY), k: 10 });
    expect(hits).toHaveLength(10);
    const terms = [...new Set(tokenizeForIndex(QUERY))];
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM memory_terms WHERE user_id = $1 AND term = ANY($2::text[])`, [userId, terms]);
    const bound = terms.length * (BM25_POSTINGS_PER_TERM + Math.max(10 * BM25_RESCORED_PER_K, BM25_RESCORED_MIN));
    expect(Number(rows[0]!.n)).toBeGreaterThan(bound);
    // Sorted by impact after reading every posting of a term, the cut saves nothing.
    expect(await tuplesReadBy(pool, last(), 'memory_terms')).toBeLessThanOrEqual(bound);
  });

  it("the lines shown with their neighbours read the memories of their conversation only (which must stay hidden)", async () => {
    const { db, last } = capturing();
    const lines = await new PostgresMessageSearch(db).withNeighbours({ userId, refs: [{ conversationId: 'c1', messageId: 'm10' }], staleSources: true, now: AT });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.previous?.messageId).toBe('m9');
    expect(lines[0]!.next?.messageId).toBe('m11');
    expect(await tuplesReadBy(pool, last(), 'memories')).toBeLessThanOrEqual(10);
    // The line and its two neighbours from their conversation's range (40 messages), not all 2,400 of the user's hashed.
    expect(await tuplesReadBy(pool, last(), 'messages')).toBeLessThanOrEqual(4 * 40);
  });
});

describe('functions planned with sorting off', () => {
  it('also switch JIT off: a sort left in their plan carries the cost of a disabled node, and compiling it cost hundreds of ms', async () => {
    const { rows } = await pool.query<{ proname: string; config: string[] }>(
      `SELECT proname, proconfig AS config FROM pg_proc WHERE proconfig IS NOT NULL AND 'enable_sort=off' = ANY(proconfig) ORDER BY proname`,
    );
    expect(rows.map((r) => r.proname)).toEqual(expect.arrayContaining(['bm25_memory_postings', 'recall_recent', 'recall_said_in', 'recall_top_by_type']));
    for (const r of rows) expect(r.config, r.proname).toContain('jit=off');
  });
});

describe('the daily sweep on tables never analyzed', () => {
  /**
   * The plan of the statement of `work` that `explained` picks, EXPLAIN ANALYZE'd as the repository
   * sends it (planner settings it sets included), in a transaction rolled back after, so the other
   * tests' memories stay as they are. The work gets `answer` in place of that statement's rows.
   */
  async function planOf(explained: RegExp, answer: Record<string, unknown>, work: (db: pg.PoolClient) => Promise<unknown>, prepare?: (db: pg.PoolClient) => Promise<unknown>): Promise<PlanNode> {
    const client = await pool.connect();
    let plan: PlanNode | undefined;
    try {
      await client.query('BEGIN');
      await prepare?.(client);
      const explaining = {
        query: async (sql: string, params?: unknown[]) => {
          if (plan || !explained.test(sql)) return client.query(sql, params);
          const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
          plan = rows[0]!['QUERY PLAN'][0].Plan;
          return { rows: [answer] };
        },
      };
      await work(explaining as unknown as pg.PoolClient);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    return plan!;
  }

  /** One decay page: every memory here is due (decay rewritten, most archived), so the page's whole limit is written. */
  const decayPagePlan = (limit: number) =>
    planOf(/^\s*WITH\b/u, { scanned: limit, last_id: null, updated: limit, moved: [] }, (db) =>
      new PostgresLifecycleRepository(db).sweepDecayPage({ now: new Date(AT.getTime() + 400 * DAY), afterId: null, limit, audit: { actor: 'test' } }),
    );

  const memoriesRead = (plan: PlanNode) => rowsRead(plan, 'memories');

  it("a page reads its own memories, not every active memory after the cursor", async () => {
    const limit = 500;
    const read = memoriesRead(await decayPagePlan(limit));
    // The first page, the locking re-read and the update: about three reads of each row of the
    // page. A plan that fetched every active memory to sort them read all 15,000.
    expect(read).toBeGreaterThanOrEqual(limit);
    expect(read).toBeLessThanOrEqual(4 * limit);
  });

  it("a page joins its decisions to the memories once, not each row against every other", async () => {
    const limit = 500;
    // Joined to two CTEs the planner (told a few rows) rescanned one per row of the other: a
    // quarter of a million comparisons at this page size, 25 million at the sweep's 5,000.
    expect(joinComparisons(await decayPagePlan(limit))).toBeLessThanOrEqual(limit);
  });

  it("the capacity step joins each user's overflow to the memories once, not each row against every other", async () => {
    const cap = 5_000;
    const plan = await planOf(/^\s*WITH\b/u, { moved: [] }, (db) =>
      new PostgresLifecycleRepository(db).archiveOverCapacity({ userIds: [userId], cap, now: AT, audit: { actor: 'test' } }),
    );
    // 10,000 memories ranked, 5,000 over the cap: the rows ranked, locked and updated once each.
    expect(memoriesRead(plan)).toBeLessThanOrEqual(4 * COUNT);
    expect(joinComparisons(plan)).toBeLessThanOrEqual(COUNT);
  });

  it("the weekly reinforcement's page reads its own memories, not every active one after the cursor", async () => {
    const limit = 500;
    const plan = await planOf(
      /^\s*SELECT\s[\s\S]*FOR UPDATE SKIP LOCKED/u,
      {},
      (db) => new PostgresLifecycleRepository(db).lockReinforcementPage({ now: new Date(AT.getTime() + DAY), afterId: null, limit }),
      // The user's 10,000 made high importance (their ids come first): each is the weekly's.
      (db) => db.query(`UPDATE memories SET importance_level = 'high' WHERE user_id = $1`, [userId]),
    );
    // The first `limit` in id order. Fetching every candidate to sort them read all 10,000.
    expect(memoriesRead(plan)).toBeLessThanOrEqual(2 * limit);
  });

  it("the weekly reinforcement's update reads each memory it refreshes by key, not the table per memory", async () => {
    const n = 500;
    const updates = Array.from({ length: n }, (_, i) => ({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, importance: 0.8, importanceLevel: 'high' as const, components: {} }));
    const plan = await planOf(/^\s*WITH\b/u, { moved: [] }, (db) =>
      new PostgresLifecycleRepository(db).applyReinforcement({ now: new Date(AT.getTime() + DAY), updates, audit: { actor: 'test' }, reason: 'weekly' }),
    );
    // Each refreshed memory read twice (its row and its old values), by primary key.
    expect(memoriesRead(plan)).toBeLessThanOrEqual(3 * n);
    expect(joinComparisons(plan)).toBeLessThanOrEqual(n);
  });
});

describe('retiring documents on tables never analyzed', () => {
  /** Pages of postings `work` visited, in a transaction rolled back after: the other tests' data stays. */
  async function postingsReadBy(work: (client: pg.PoolClient) => Promise<unknown>, table = 'memory_terms', prepare?: (client: pg.PoolClient) => Promise<unknown>): Promise<number> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await prepare?.(client);
      const before = await pagesVisitedInTransaction(client, table);
      await work(client);
      return (await pagesVisitedInTransaction(client, table)) - before;
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  it("archiving one memory reads that memory's postings, not every posting of its user", async () => {
    const id = '00000000-0000-4000-8000-000000000100';
    const read = await postingsReadBy((client) => new PostgresMemoryRepository(client).setStatus({ userId, id, status: 'archived', at: AT }));
    expect(read).toBeGreaterThan(0);
    // Its eight postings at most, each a heap page, and the index descents. Through the primary
    // key the delete walked the user's whole range: 1,322 pages.
    expect(read).toBeLessThanOrEqual(40);
  });

  it("a decay page reads the postings of the memories it retires, not every posting of their users", async () => {
    const limit = 500;
    const read = await postingsReadBy((client) => new PostgresLifecycleRepository(client).sweepDecayPage({ now: new Date(AT.getTime() + 400 * DAY), afterId: null, limit, audit: { actor: 'test' } }));
    expect(read).toBeGreaterThan(0);
    // Up to eight postings per memory, each found then deleted, and a descent per memory: about
    // 23 pages a memory here. Through the primary key: 664,112 pages for the page.
    expect(read).toBeLessThanOrEqual(limit * 40);
  });

  it("rewriting an episode reads that episode's postings, not every posting of its user", async () => {
    // The store opens its own transaction; here it runs inside the test's, on a savepoint, so
    // the pages it visits are counted and everything is rolled back after.
    const insideTestTransaction = (client: pg.PoolClient) =>
      ({
        connect: async () =>
          new Proxy(client, {
            get(target, prop, receiver) {
              if (prop === 'release') return () => {};
              if (prop === 'query') {
                const savepoints: Record<string, string> = { BEGIN: 'SAVEPOINT store', COMMIT: 'RELEASE SAVEPOINT store', ROLLBACK: 'ROLLBACK TO SAVEPOINT store' };
                return (text: unknown, values?: unknown) => target.query((typeof text === 'string' && savepoints[text]) || (text as string), values as unknown[]);
              }
              return Reflect.get(target, prop, receiver) as unknown;
            },
          }),
      }) as unknown as pg.Pool;
    const read = await postingsReadBy(
      (client) =>
        new PostgresEpisodeStore(insideTestTransaction(client)).replaceForConversation({
          userId, conversationId: 'c1', timeZone: 'UTC',
          drafts: [{ day: '2026-03-01', startedAt: AT, endedAt: AT, messageIds: ['m1'], summary: 'worda wordb wordc', summaryMessageIds: ['m1'] }],
        }),
      'episode_terms',
      // 1,800 episodes of the user's other conversations, ten postings each, never analysed.
      (client) => client.query(
        `WITH e AS (
           INSERT INTO episodes (id, user_id, conversation_id, day, time_zone, started_at, ended_at, summary, message_ids, summary_message_ids, doc_length, content_hash)
           SELECT md5('episode' || g)::uuid, $1, 'c' || (2 + g % 58), DATE '2024-01-01' + g, 'UTC', $2, $2, 'summary', '{m1}', '{m1}', 10, 'h' || g
             FROM generate_series(0, 1799) g
           RETURNING id
         )
         INSERT INTO episode_terms (user_id, term, episode_id, tf, doc_length) SELECT $1, 'term' || t, e.id, 1, 10 FROM e, generate_series(0, 9) t`,
        [userId, AT],
      ),
    );
    expect(read).toBeGreaterThan(0);
    // The delete finds no postings (the episode is new) in a descent, then its three postings are
    // written: 24 pages. Through the primary key the delete walked the user's 18,000: 292 pages.
    expect(read).toBeLessThanOrEqual(80);
  });

  it("a retention page reads the postings of the messages it deletes, not every posting of their users", async () => {
    const limit = 200;
    const read = await postingsReadBy(
      (client) => new PostgresRetentionRepository(client).messagesPage({ cutoff: new Date(AT.getTime() + DAY), after: null, limit }),
      'message_terms',
      // A user who has talked for a while: 300,000 postings of later messages, which the page must
      // not read. With only the 4,800 above, scanning the whole table was the cheapest plan.
      (client) => client.query(
        `INSERT INTO message_terms (user_id, term, conversation_id, message_id, tf, doc_length)
         SELECT $1, 'later' || (g % 500), 'later' || (g / 10000), 'm' || (g / 2), 1, 2 FROM generate_series(0, 299999) g`,
        [userId],
      ),
    );
    expect(read).toBeGreaterThan(0);
    // Two terms a message: a descent and a few heap pages each, about 10 pages a message here.
    // Without an index by message the page visited 1.2 million pages of postings: the user's
    // range once per message.
    expect(read).toBeLessThanOrEqual(limit * 15);
  });
});
