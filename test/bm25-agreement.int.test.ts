import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresConversationRepository } from '../src/adapters/postgres/conversation-repository';
import { PostgresEpisodeStore } from '../src/adapters/postgres/episode-repository';
import { PostgresMemoryRepository } from '../src/adapters/postgres/memory-repository';
import { PostgresMessageSearch } from '../src/adapters/postgres/message-search-repository';
import { inUserTransaction } from '../src/adapters/postgres/pool';
import type { NewMemory } from '../src/core/ports/memory';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { referenceBm25Scores } from './support/bm25-reference';
import { createTestContext, type TestContext } from './support/harness';
import { mulberry32 } from './support/prng';
import { indexedOnThisThread } from './support/indexed-messages';

/**
 * Every SQL keyword index (memories, episodes, raw messages) must score exactly as the pure
 * reference scorer in src/core/recall/bm25.ts. Random small corpora, written through the real
 * repositories (so the postings, lengths and per-user statistics are the ones the write paths
 * keep), are searched with random queries and compared document by document.
 */

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});

afterAll(async () => {
  await ctx?.close();
});

// Skewed draws (a few words are common) give repeated terms, shared terms and distinct lengths.
const VOCABULARY = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', '火锅', '咖啡', '跑步'];
const SEEDS = [1, 2, 3, 4, 5];
const RELATIVE_TOLERANCE = 1e-9;

interface Corpus {
  docs: { id: string; text: string }[];
  queries: string[];
}

function randomCorpus(seed: number, idOf: (i: number) => string): Corpus {
  const rand = mulberry32(seed);
  const word = () => VOCABULARY[Math.floor(rand() ** 2 * VOCABULARY.length)]!;
  const docCount = 3 + Math.floor(rand() * 20);
  const docs = Array.from({ length: docCount }, (_, i) => ({ id: idOf(i), text: Array.from({ length: 1 + Math.floor(rand() * 12) }, word).join(' ') }));
  const queries = Array.from({ length: 6 }, () => Array.from({ length: 1 + Math.floor(rand() * 4) }, word).join(' '));
  return { docs, queries };
}

function expectSameScores(sql: { id: string; score: number }[], reference: Map<string, number>, label: string): void {
  expect(new Set(sql.map((h) => h.id)), `${label}: the documents found`).toEqual(new Set(reference.keys()));
  for (const hit of sql) {
    const want = reference.get(hit.id)!;
    expect(Math.abs(hit.score - want) / Math.max(Math.abs(want), 1e-12), `${label}: score of ${hit.id} (${hit.score} vs ${want})`).toBeLessThan(RELATIVE_TOLERANCE);
  }
}

async function newUser(name: string): Promise<string> {
  const userKey = ctx.userKey(name);
  await ctx.runtime.pool.query(`INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, 'tenant-a', $2) ON CONFLICT DO NOTHING`, [userKey, name]);
  return userKey;
}

const AT = new Date('2026-03-01T09:00:00Z');

describe('one BM25: the SQL indexes agree with the pure scorer', () => {
  it.each(SEEDS)('memories (seed %i)', async (seed) => {
    const userId = await newUser(`bm25-memories-${seed}`);
    const corpus = randomCorpus(seed, (i) => `00000000-0000-4000-8000-${String(seed * 1000 + i).padStart(12, '0')}`);
    await inUserTransaction(ctx.runtime.pool, userId, async (c) => {
      for (const d of corpus.docs) {
        const memory: NewMemory = {
          id: d.id, userId, text: d.text, normalizedText: `${d.id} ${d.text}`, type: 'fact', status: 'active', scope: 'global', confidence: 0.9, importance: 0.5,
          importanceLevel: 'medium', importanceComponents: {}, frequencyCount: 1, decayScore: 1, emotionTags: [], associatedTopics: [], keywords: [],
          source: { via: 'api', role: 'user' }, metadata: {}, createdAt: AT, updatedAt: AT, lastRecalledAt: null, lastAccessedAt: AT, expiresAt: null,
          supersedes: null, supersededBy: null, via: 'api', pending: false, tokens: tokenizeForIndex(d.text),
        };
        await new PostgresMemoryRepository(c).insert(memory);
      }
    });
    for (const query of corpus.queries) {
      const hits = await new PostgresMemoryRepository(ctx.runtime.pool).bm25({ userId, tokens: tokenizeForIndex(query), k: 1000 });
      expectSameScores(hits, referenceBm25Scores(corpus.docs, query), `memories seed ${seed} "${query}"`);
    }
  });

  it.each(SEEDS)('raw messages (seed %i)', async (seed) => {
    const userId = await newUser(`bm25-messages-${seed}`);
    const corpus = randomCorpus(seed + 100, (i) => `m${i}`);
    await inUserTransaction(ctx.runtime.pool, userId, (c) =>
      new PostgresConversationRepository(c).append({ userId, conversationId: 'c1', messages: indexedOnThisThread(corpus.docs.map((d, i) => ({ id: d.id, role: 'user' as const, content: d.text, at: new Date(AT.getTime() + i * 1000), truncated: false }))) }),
    );
    for (const query of corpus.queries) {
      const hits = await new PostgresMessageSearch(ctx.runtime.pool).bm25({ userId, tokens: tokenizeForIndex(query), k: 1000 });
      expectSameScores(hits.map((h) => ({ id: h.messageId, score: h.score })), referenceBm25Scores(corpus.docs, query), `messages seed ${seed} "${query}"`);
    }
  });

  it.each(SEEDS)('episodes (seed %i): the same documents, best first by the reference score', async (seed) => {
    const userId = await newUser(`bm25-episodes-${seed}`);
    const corpus = randomCorpus(seed + 200, (i) => `c${i}`);
    // One conversation per document: an episode's id comes from (user, conversation, day).
    const episodeOf = new Map<string, string>();
    for (const d of corpus.docs) {
      await inUserTransaction(ctx.runtime.pool, userId, (c) =>
        new PostgresConversationRepository(c).append({ userId, conversationId: d.id, messages: indexedOnThisThread([{ id: 'm1', role: 'user' as const, content: d.text, at: AT, truncated: false }]) }),
      );
      const written = await new PostgresEpisodeStore(ctx.runtime.pool).replaceForConversation({
        userId,
        conversationId: d.id,
        timeZone: 'UTC',
        drafts: [{ day: '2026-03-01', startedAt: AT, endedAt: AT, messageIds: ['m1'], summary: d.text, summaryMessageIds: ['m1'] }],
      });
      episodeOf.set(written.written[0]!, d.id);
    }
    for (const query of corpus.queries) {
      const reference = referenceBm25Scores(corpus.docs, query);
      const { byWords } = await new PostgresEpisodeStore(ctx.runtime.pool).search({ userId, tokens: tokenizeForIndex(query), ranges: [], k: 1000 });
      const found = byWords.map((e) => episodeOf.get(e.id)!);
      expect(new Set(found), `episodes seed ${seed} "${query}"`).toEqual(new Set(reference.keys()));
      // The search returns no scores, so its order is checked: never a better document after a worse one.
      for (let i = 1; i < found.length; i += 1) {
        expect(reference.get(found[i - 1]!)! * (1 + RELATIVE_TOLERANCE), `episodes seed ${seed} "${query}" order at ${i}`).toBeGreaterThanOrEqual(reference.get(found[i]!)!);
      }
    }
  });
});
