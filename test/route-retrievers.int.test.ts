import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryAnnRetriever } from '../src/recall/retrievers/ann-retriever';
import { MemoryBm25Retriever } from '../src/recall/retrievers/bm25-retriever';
import { memoryIds } from '../src/recall/retrievers/memory-route';
import { ExchangeRetriever, exchangesOf } from '../src/recall/retrievers/exchange-retriever';
import { QueryEmbeddings } from '../src/recall/retrievers/query-embeddings';
import { ChromaVectorIndex } from '../src/adapters/chroma/chroma-vector-index';
import { chromaClient, nearestOwned } from '../src/adapters/chroma/user-collections';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { MemoryClient } from '../src/client/index';
import { recall } from '../src/recall/recall';
import { exchangeSearchForRecall, planEpisodic } from '../src/recall/episodic-recall';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { seedMemories } from './support/seed';

/**
 * The recall routes as LangChain retrievers on the real stack (PostgreSQL, Chroma, e5): each
 * answers for its own user only, the ANN retriever (LangChain's Chroma store on the user's own
 * collection) returns what a raw query of that collection returns, in the same order, and recall
 * composes them as it composed the direct calls.
 */
let ctx: TestContext;
let alice: string;
let bob: string;
const now = new Date('2026-06-02T12:00:00Z');
const SHARED = ['我对花生过敏', 'I am allergic to peanuts', '我喜欢在杭州爬山', 'my thesis deadline is in June', '我每天早上喝一杯拿铁咖啡'];

beforeAll(async () => {
  ctx = await createTestContext();
  alice = `${ctx.prefix}-alice`;
  bob = `${ctx.prefix}-bob`;
  // The same texts for both users (same vectors, same words), and a few of Alice's own.
  await seedMemories(ctx.runtime.deps, ctx.userKey(alice), [...SHARED, '我的猫叫年糕', 'I run 5 km on Sundays'].map((text) => ({ text })));
  await seedMemories(ctx.runtime.deps, ctx.userKey(bob), SHARED.map((text) => ({ text })));
  const client = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
  for (const user of [alice, bob]) {
    await client.addMessages(user, `${user}-c1`, [
      { id: 'm1', role: 'user', content: '上次你推荐的那本科幻小说叫什么？', at: '2026-05-20T10:00:00Z' },
      { id: 'm2', role: 'assistant', content: '我推荐的是《三体》，刘慈欣写的科幻小说。', at: '2026-05-20T10:00:30Z' },
    ]);
  }
});
afterAll(async () => {
  await ctx?.close();
});

async function idsOf(userKey: string): Promise<Set<string>> {
  const { rows } = await ctx.runtime.pool.query<{ id: string }>('SELECT id FROM memories WHERE user_id = $1', [userKey]);
  return new Set(rows.map((r) => r.id));
}

describe('recall route retrievers on the real stack', () => {
  it("ANN: the user's own memories only, in the order of a raw query of the user's collection", async () => {
    const deps = ctx.runtime.deps;
    const [aliceIds, bobIds] = [await idsOf(ctx.userKey(alice)), await idsOf(ctx.userKey(bob))];
    const vectors = deps.vectors as ChromaVectorIndex;
    const collection = await chromaClient(ctx.runtime.endpoints.chromaUrl).getCollection({ name: vectors.collectionName(ctx.userKey(alice)), embeddingFunction: null as never });
    for (const query of ['花生过敏', 'peanut allergy', '周末跑步', 'coffee in the morning']) {
      const retriever = new MemoryAnnRetriever({ vectors, embeddings: new QueryEmbeddings(deps.embedder), userId: ctx.userKey(alice), k: 20 });
      const docs = await retriever.invoke(query);
      expect(docs.length).toBe(aliceIds.size);
      for (const d of docs) {
        expect(aliceIds.has(d.id!)).toBe(true);
        expect(bobIds.has(d.id!)).toBe(false);
      }
      const raw = await nearestOwned(collection, ctx.userKey(alice), { embedding: await deps.embedder.embedQuery({ text: query }), k: 20 });
      expect(docs.map((d) => d.id)).toEqual(raw.map((h) => h.id));
      docs.forEach((d, i) => expect(d.metadata.similarity).toBeCloseTo(raw[i]!.similarity, 6));
    }
  });

  it("BM25: the user's own memories only, as the store's BM25 ranks them", async () => {
    const deps = ctx.runtime.deps;
    const [aliceIds, bobIds] = [await idsOf(ctx.userKey(alice)), await idsOf(ctx.userKey(bob))];
    for (const query of ['花生', 'allergic peanuts', '杭州爬山']) {
      const docs = await new MemoryBm25Retriever({ memories: deps.memories, userId: ctx.userKey(alice), k: 20 }).invoke(query);
      expect(docs.length).toBeGreaterThan(0);
      for (const id of memoryIds(docs)) {
        expect(aliceIds.has(id)).toBe(true);
        expect(bobIds.has(id)).toBe(false);
      }
      const direct = await deps.memories.bm25({ userId: ctx.userKey(alice), tokens: tokenizeForIndex(query), k: 20 });
      expect(memoryIds(docs)).toEqual(direct.map((h) => h.id));
    }
  });

  it("exchanges: the user's own past lines only", async () => {
    const deps = ctx.runtime.deps;
    const query = '上次推荐的科幻小说';
    const plan = planEpisodic(query, { now, timeZone: 'UTC', timeRoute: true });
    const search = (userKey: string) => (q: string) => exchangeSearchForRecall(deps, userKey, { tokens: tokenizeForIndex(q), plan, now, deadline: Date.now() + 5_000 });
    const docs = await new ExchangeRetriever({ search: search(ctx.userKey(alice)) }).invoke(query);
    expect(docs.length).toBeGreaterThan(0);
    expect(docs[0]!.pageContent).toContain('三体');
    for (const e of exchangesOf(docs)) expect(e.conversationId).toBe(`${alice}-c1`);
    const { rows } = await ctx.runtime.pool.query<{ user_id: string }>('SELECT DISTINCT user_id FROM messages WHERE conversation_id = $1', [`${alice}-c1`]);
    expect(rows.map((r) => r.user_id)).toEqual([ctx.userKey(alice)]);
  });

  it("recall through the retrievers finds the user's memories, never the other user's same text", async () => {
    const deps = ctx.runtime.deps;
    const bobIds = await idsOf(ctx.userKey(bob));
    const r = await recall(deps, ctx.userKey(alice), '我对什么过敏？', { now, routes: ['ann', 'bm25'] });
    expect(r.error).toBeUndefined();
    expect(r.routes.map((x) => [x.route, x.ok])).toEqual([
      ['ann', true],
      ['bm25', true],
    ]);
    expect(r.memories.map((m) => m.text)).toContain('我对花生过敏');
    for (const m of r.memories) expect(bobIds.has(m.id)).toBe(false);
  });

  it('recall injects past exchanges through the exchanges retriever, the user’s own only', async () => {
    const r = await recall(ctx.runtime.deps, ctx.userKey(alice), '上次你推荐的科幻小说是哪本？', { now, timeZone: 'UTC' });
    expect(r.error).toBeUndefined();
    expect(r.pastExchanges.map((e) => e.assistantText).join('\n')).toContain('三体');
    for (const e of r.pastExchanges) expect(e.conversationId).toBe(`${alice}-c1`);
    expect(r.injectedMessageIds).toEqual(expect.arrayContaining(['m1', 'm2']));
  });
});
