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
import { createTestContext, type TestContext } from './support/harness';

/**
 * English stems in the BM25 analysis (src/core/text/stem.ts, analyzeForIndex):
 * - the hand-written Porter2 agrees word for word with PostgreSQL's `english_stem` dictionary
 *   (the Snowball project's C stemmer) on every word of the project's own docs;
 * - rows posted before stemming (surface forms only) still match every query they matched then,
 *   next to rows posted with stems, on the real memory and message indexes.
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
    const differing = compared.filter((r) => englishStem(r.w) !== r.s![0]).map((r) => `${r.w}: ${englishStem(r.w)} vs ${r.s![0]}`);
    expect(differing).toEqual([]);
  });

  it('memories: a row posted before stemming keeps its matches, a row posted now also matches other forms', async () => {
    const userId = await newUser('bm25-stems-memories');
    const oldId = '00000000-0000-4000-8000-000000000701';
    const newId = '00000000-0000-4000-8000-000000000702';
    await inUserTransaction(ctx.runtime.pool, userId, async (c) => {
      const repo = new PostgresMemoryRepository(c);
      // Posted the old way: the words alone, as every memory was before stems were added.
      await repo.insert(memory(userId, oldId, 'Has allergies to peanuts and shellfish', surfaceTokensForIndex('Has allergies to peanuts and shellfish')));
      await repo.insert(memory(userId, newId, 'Painted the garden fence green last spring', tokenizeForIndex('Painted the garden fence green last spring')));
    });
    const search = async (q: string) => (await new PostgresMemoryRepository(ctx.runtime.pool).bm25({ userId, tokens: tokenizeForIndex(q), k: 10 })).map((h) => h.id);
    expect(await search('what allergies do I have')).toEqual([oldId]);
    expect(await search('peanuts')).toEqual([oldId]);
    expect(await search('is the user painting anything')).toEqual([newId]);
    expect(await search('paints fences')).toEqual([newId]);
    // The old row has no stems until it is posted again: another form of its word does not reach it.
    expect(await search('allergy')).toEqual([]);
  });

  it('messages: an old row and a new row each match their words, the new one its stems too', async () => {
    const userId = await newUser('bm25-stems-messages');
    await inUserTransaction(ctx.runtime.pool, userId, (c) =>
      new PostgresConversationRepository(c).append({
        userId,
        conversationId: 'c1',
        messages: [
          { id: 'old', role: 'user', content: 'We were hiking in the mountains', at: AT, truncated: false },
          { id: 'new', role: 'user', content: 'My daughter started painting classes', at: new Date(AT.getTime() + 1000), truncated: false },
        ],
      }),
    );
    // Turn the first row into one posted before stemming: only its surface terms stay.
    await ctx.runtime.pool.query(`DELETE FROM message_terms WHERE user_id = $1 AND message_id = 'old' AND NOT (term = ANY($2::text[]))`, [
      userId,
      surfaceTokensForIndex('We were hiking in the mountains'),
    ]);
    const { rows } = await ctx.runtime.pool.query<{ term: string }>(`SELECT term FROM message_terms WHERE user_id = $1 AND message_id = 'old' ORDER BY term`, [userId]);
    expect(rows.map((r) => r.term)).toEqual(['hiking', 'mountains']);
    const search = async (q: string) => (await new PostgresMessageSearch(ctx.runtime.pool).bm25({ userId, tokens: tokenizeForIndex(q), k: 10 })).map((h) => h.messageId);
    expect(await search('when did we go hiking')).toEqual(['old']);
    expect(await search('mountains')).toEqual(['old']);
    expect(await search('does she paint')).toEqual(['new']);
    expect(await search('class')).toEqual(['new']);
    expect(await search('hike')).toEqual([]);
  });
});
