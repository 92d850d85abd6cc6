import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresConversationRepository } from '../src/adapters/postgres/conversation-repository';
import { PostgresMemoryRepository } from '../src/adapters/postgres/memory-repository';
import { PostgresMessageSearch } from '../src/adapters/postgres/message-search-repository';
import { inUserTransaction } from '../src/adapters/postgres/pool';
import { surfaceTokensForIndex, tokenizeForIndex } from '../src/adapters/text/jieba';
import type { NewMemory } from '../src/core/ports/memory';
import { englishStem } from '../src/core/text/stem';
import { STOPWORDS, termFrequencies } from '../src/core/text/tokenize';
import { createTestContext, type TestContext } from './support/harness';
import { indexedOnThisThread } from './support/indexed-messages';

/**
 * English stems in the BM25 analysis (src/core/text/stem.ts, analyzeForIndex):
 * - the Porter2 package agrees word for word with PostgreSQL's `english_stem` dictionary
 *   (the Snowball project's C stemmer) on every word of the project's own docs;
 * - rows posted before stemming (the words as written) are re-posted by migration
 *   1797200000000's `bm25_restem_postings` into exactly the postings the text gets now, with the
 *   document frequencies, message lengths and collection statistics kept.
 */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});

afterAll(async () => {
  await ctx?.close();
});

async function newUser(name: string): Promise<string> {
  const userKey = ctx.userKey(name);
  await ctx.runtime.pool.query(`INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, 'tenant-a', $2) ON CONFLICT DO NOTHING`, [userKey, name]);
  return userKey;
}

const AT = new Date('2026-03-01T09:00:00Z');

function memory(userId: string, id: string, text: string, tokens: string[]): NewMemory {
  return {
    id, userId, text, normalizedText: text, type: 'fact', status: 'active', scope: 'global', confidence: 0.9, importance: 0.5,
    importanceLevel: 'medium', importanceComponents: {}, frequencyCount: 1, decayScore: 1, emotionTags: [], associatedTopics: [], keywords: [],
    source: { via: 'api', role: 'user' }, metadata: {}, createdAt: AT, updatedAt: AT, lastRecalledAt: null, lastAccessedAt: AT, expiresAt: null,
    supersedes: null, supersededBy: null, via: 'api', pending: false, tokens,
  };
}

describe('English stems in BM25', () => {
  it("the stemmer agrees with PostgreSQL's english_stem on every word of the project's docs", async () => {
    const docs = join(__dirname, '..', 'docs');
    const text = [join(__dirname, '..', 'README.md'), ...readdirSync(docs).filter((f) => f.endsWith('.md')).map((f) => join(docs, f))]
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n')
      .toLowerCase();
    const words = [...new Set(text.match(/[a-z][a-z']{2,}/gu) ?? [])];
    expect(words.length).toBeGreaterThan(1000);
    const { rows } = await ctx.runtime.pool.query<{ w: string; s: string[] | null }>(
      `SELECT w, ts_lexize('english_stem', w) AS s FROM unnest($1::text[]) AS w`,
      [words],
    );
    // An empty answer is a word on PostgreSQL's stopword list: it has no stem to compare.
    const compared = rows.filter((r) => r.s !== null && r.s.length > 0);
    expect(compared.length).toBeGreaterThan(1000);
    // A run of y's ("yyyy" in a date format) is the one place the two read Porter2's y rule apart.
    const differing = compared.filter((r) => !/^y+$/u.test(r.w) && englishStem(r.w) !== r.s![0]).map((r) => `${r.w}: ${englishStem(r.w)} vs ${r.s![0]}`);
    expect(differing).toEqual([]);
  });

  const englishStopwords = [...STOPWORDS].filter((w) => /^[a-z']+$/u.test(w));
  const restem = (userId: string) =>
    inUserTransaction(ctx.runtime.pool, userId, (c) => c.query('SELECT bm25_restem_postings($1, $2::text[])', [userId, englishStopwords]));

  it('memories: a row posted before stemming is re-posted by the migration as if posted now', async () => {
    const userId = await newUser('bm25-stems-memories');
    const oldId = '00000000-0000-4000-8000-000000000701';
    const newId = '00000000-0000-4000-8000-000000000702';
    const oldText = 'Has allergies to peanuts; painted the fence, paints often, and loves painting';
    await inUserTransaction(ctx.runtime.pool, userId, async (c) => {
      const repo = new PostgresMemoryRepository(c);
      // Posted the old way: the words as written, as every memory was before stemming.
      await repo.insert(memory(userId, oldId, oldText, surfaceTokensForIndex(oldText)));
      await repo.insert(memory(userId, newId, 'Went hiking in the mountains', tokenizeForIndex('Went hiking in the mountains')));
    });
    const search = async (q: string) => (await new PostgresMemoryRepository(ctx.runtime.pool).bm25({ userId, tokens: tokenizeForIndex(q), k: 10 })).map((h) => h.id);
    expect(await search('does she like to hike')).toEqual([newId]);
    // Before the re-posting a stemmed query misses the old row's inflected words.
    expect(await search('what allergies do I have')).toEqual([]);
    await restem(userId);
    expect(await search('what allergies do I have')).toEqual([oldId]);
    expect(await search('allergy')).toEqual([oldId]);
    expect(await search('peanut')).toEqual([oldId]);
    const postings = async (id: string) =>
      (await ctx.runtime.pool.query<{ term: string; tf: number; doc_length: number }>(
        'SELECT term, tf, doc_length FROM memory_terms WHERE user_id = $1 AND memory_id = $2 ORDER BY term', [userId, id],
      )).rows;
    // The same postings as the text analysed now: "painted", "paints", "painting" merged into one.
    const now = termFrequencies(tokenizeForIndex(oldText));
    expect(await postings(oldId)).toEqual([...now].sort(([a], [b]) => (a < b ? -1 : 1)).map(([term, tf]) => ({ term, tf, doc_length: tokenizeForIndex(oldText).length })));
    expect(now.get('paint')).toBe(3);
    const df = await ctx.runtime.pool.query<{ term: string; df: number }>(`SELECT term, df FROM memory_term_df WHERE user_id = $1 AND df > 0 ORDER BY term`, [userId]);
    const counted = await ctx.runtime.pool.query<{ term: string; df: number }>(`SELECT term, count(*)::int AS df FROM memory_terms WHERE user_id = $1 GROUP BY term ORDER BY term`, [userId]);
    expect(df.rows.map((r) => [r.term, Number(r.df)])).toEqual(counted.rows.map((r) => [r.term, r.df]));
  });

  it('messages: the re-posting merges forms and keeps message lengths and statistics', async () => {
    const userId = await newUser('bm25-stems-messages');
    const texts = { old: 'We were hiking, hiked again and will hike more in the mountains', mix: 'Painting class: paint 2 walls' };
    await inUserTransaction(ctx.runtime.pool, userId, async (c) => {
      await new PostgresConversationRepository(c).append({
        userId,
        conversationId: 'c1',
        messages: indexedOnThisThread([
          { id: 'old', role: 'user' as const, content: texts.old, at: AT, truncated: false },
          { id: 'mix', role: 'user' as const, content: texts.mix, at: new Date(AT.getTime() + 1000), truncated: false },
        ]),
      });
      // Turn both rows into ones posted before stemming: their postings become the words as written.
      await c.query(`DELETE FROM message_terms WHERE user_id = $1`, [userId]);
      for (const [id, text] of Object.entries(texts)) {
        const tokens = surfaceTokensForIndex(text);
        const tf = termFrequencies(tokens);
        await c.query(
          `INSERT INTO message_terms (user_id, term, conversation_id, message_id, tf, doc_length)
           SELECT $1, t, 'c1', $2, f, $5 FROM unnest($3::text[], $4::int[]) AS x(t, f)`,
          [userId, id, [...tf.keys()], [...tf.values()], tokens.length],
        );
      }
    });
    const stats = async () => {
      const { rows } = await ctx.runtime.pool.query<{ doc_count: string; total_length: string }>('SELECT doc_count, total_length FROM message_index_stats WHERE user_id = $1', [userId]);
      const lengths = await ctx.runtime.pool.query<{ message_id: string; doc_length: number }>('SELECT message_id, doc_length FROM messages WHERE user_id = $1 ORDER BY message_id', [userId]);
      return { docs: Number(rows[0]!.doc_count), total: Number(rows[0]!.total_length), lengths: lengths.rows.map((r) => [r.message_id, r.doc_length]) };
    };
    const before = await stats();
    expect(before).toEqual({ docs: 2, total: surfaceTokensForIndex(texts.old).length + surfaceTokensForIndex(texts.mix).length, lengths: [['mix', surfaceTokensForIndex(texts.mix).length], ['old', surfaceTokensForIndex(texts.old).length]] });
    await restem(userId);
    expect(await stats()).toEqual(before);
    const { rows } = await ctx.runtime.pool.query<{ term: string; tf: number }>(`SELECT term, tf FROM message_terms WHERE user_id = $1 AND message_id = 'old' ORDER BY term`, [userId]);
    const now = [...termFrequencies(tokenizeForIndex(texts.old))].map(([term, tf]) => ({ term, tf })).sort((a, b) => (a.term < b.term ? -1 : 1));
    expect(rows).toEqual(now);
    expect(now.find((r) => r.term === 'hike')?.tf).toBe(3);
    const search = async (q: string) => (await new PostgresMessageSearch(ctx.runtime.pool).bm25({ userId, tokens: tokenizeForIndex(q), k: 10 })).map((h) => h.messageId);
    expect(await search('when did we go hiking')).toEqual(['old']);
    expect(await search('mountain')).toEqual(['old']);
    expect(await search('does she paint')).toEqual(['mix']);
    expect(await search('classes')).toEqual(['mix']);
  });
});
