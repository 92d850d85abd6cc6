import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChromaExchangeIndex } from '../src/adapters/chroma/chroma-exchange-index';
import { chromaClient } from '../src/adapters/chroma/user-collections';
import { MemoryClient } from '../src/client';
import { indexExchanges } from '../src/services/exchange-index';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// Dense search over every exchange on the real stack: the indexer (the Schedule's workflow) embeds
// each (user line, reply) pair into the user's own exchange collection, a Chroma outage only
// delays it, conversation search finds an answer that shares no word with the question through
// exchange_ann, forgotten lines never come back (nor stay in Chroma), and a purge drops the collection.

let ctx: TestContext;
let client: MemoryClient;
beforeAll(async () => {
  ctx = await createTestContext({ RECALL_TIMEOUT_MS: '20000' });
  client = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
});
afterAll(async () => {
  await ctx?.close();
});

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function say(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][], from = 0): Promise<void> {
  await client.addMessages(
    user,
    conversation,
    lines.map(([role, content], i) => ({ id: `${conversation}-m${from + i + 1}`, role, content, at: at(startIso, (from + i) * 30) })),
  );
}

/** One tick of the exchange indexer, as its Schedule runs it. */
async function indexerTick(tag: string): Promise<{ conversations: number; exchanges: number; failed: number }> {
  return ctx.runtime.temporal.workflow.execute('exchangeIndexWorkflow', { taskQueue: ctx.taskQueue, workflowId: `${ctx.prefix}-index-${tag}`, args: [{}] });
}

async function watermark(user: string, conversation: string): Promise<{ indexed: number; last: number }> {
  const { rows } = await ctx.runtime.deps.pool.query<{ indexed: string; last: string }>(
    'SELECT exchanges_indexed_seq AS indexed, last_seq AS last FROM conversations WHERE user_id = $1 AND conversation_id = $2',
    [ctx.userKey(user), conversation],
  );
  return { indexed: Number(rows[0]!.indexed), last: Number(rows[0]!.last) };
}

const exchangeCollection = () => ChromaExchangeIndex.create({ url: ctx.runtime.endpoints.chromaUrl, memoryCollection: ctx.runtime.config.chroma.collection });

async function collectionExists(name: string): Promise<boolean> {
  try {
    await chromaClient(ctx.runtime.endpoints.chromaUrl).getCollection({ name, embeddingFunction: null as never });
    return true;
  } catch {
    return false;
  }
}

describe('exchange index', () => {
  const user = 'dense-alice';
  const conversation = 'c-pets';

  it('is owed after messages are stored, survives a Chroma outage without losing work, and is then indexed by the Schedule workflow', { timeout: 180_000 }, async () => {
    await say(user, conversation, '2026-03-01T09:00:00Z', [
      ['user', 'Morning! How are you doing today?'],
      ['assistant', 'Good morning, all fine here. What is on your mind?'],
      ['user', 'We finally brought home a golden retriever puppy last weekend, his name is Biscuit.'],
      ['assistant', 'Congratulations! Biscuit sounds adorable.'],
      ['user', 'The quarterly report for finance is due on Friday.'],
      ['assistant', 'Want me to outline it with you?'],
      ['user', 'Also I started learning to play the cello.'],
    ]);
    expect((await watermark(user, conversation)).indexed).toBe(0);

    // Chroma unreachable: the indexer fails, and the watermark stays where it was.
    const down = ChromaExchangeIndex.create({ url: 'http://127.0.0.1:9', memoryCollection: ctx.runtime.config.chroma.collection });
    await expect(indexExchanges({ ...ctx.runtime.deps, exchangeVectors: down }, { limit: 100, budgetMs: 30_000 })).rejects.toThrow();
    expect((await watermark(user, conversation)).indexed).toBe(0);

    // Chroma back: the next tick indexes everything that was owed.
    const tick = await indexerTick('1');
    expect(tick.failed).toBe(0);
    expect(tick.exchanges).toBeGreaterThanOrEqual(4);
    const w = await watermark(user, conversation);
    expect(w.indexed).toBe(w.last);
    expect((await indexerTick('2')).conversations).toBe(0);
  });

  it('indexes a lone user line again with the reply that came later (same id, no duplicate)', { timeout: 120_000 }, async () => {
    const index = exchangeCollection();
    const chroma = chromaClient(ctx.runtime.endpoints.chromaUrl);
    const collection = await chroma.getCollection({ name: index.collectionName(ctx.userKey(user)), embeddingFunction: null as never });
    const before = await collection.count();
    await say(user, conversation, '2026-03-01T09:00:00Z', [['assistant', 'A cello! Do you take lessons?']], 7);
    await indexerTick('3');
    expect(await collection.count()).toBe(before);
    const w = await watermark(user, conversation);
    expect(w.indexed).toBe(w.last);
  });

  it('finds the answering exchange for a paraphrase that shares no word with it, through exchange_ann', { timeout: 60_000 }, async () => {
    const search = await client.searchConversations(user, { query: 'Which dog breed did we adopt?', topK: 3, now: '2026-03-10T10:00:00Z' });
    const found = search.exchanges.find((x) => x.messageIds.includes(`${conversation}-m3`));
    expect(found, JSON.stringify(search.exchanges.map((x) => [x.user?.text, x.routes]))).toBeDefined();
    expect(found!.routes).toContain('exchange_ann');
    expect(found!.routes).not.toContain('exchange_bm25');
    expect(search.routes.find((r) => r.route === 'exchange_ann')).toMatchObject({ ok: true });
    // The greeting of the same session is not carried in by the session's episode.
    expect(search.exchanges[0]!.messageIds).toContain(`${conversation}-m3`);
  });

  it('never returns a line the user asked to forget, and takes the vector of its exchange out of Chroma', { timeout: 180_000 }, async () => {
    const u = 'dense-forget';
    await say(u, 'c1', '2026-02-01T10:00:00Z', [
      ['user', 'I have type 2 diabetes, keep that in mind for food suggestions.'],
      ['assistant', 'Noted.'],
    ]);
    await client.endConversation(u, 'c1', { wait: true });
    await indexerTick('forget-1');
    await say(u, 'c2', '2026-02-05T10:00:00Z', [
      ['user', "Please forget my diabetes information, I don't want you to store health data."],
      ['assistant', "Done, I've forgotten it."],
    ]);
    await client.endConversation(u, 'c2', { wait: true });
    await indexerTick('forget-2');
    const search = await client.searchConversations(u, { query: 'blood sugar illness', now: '2026-02-06T10:00:00Z' });
    expect(JSON.stringify(search.exchanges)).not.toMatch(/type 2/iu);
    // The forgotten exchange's vector left Chroma with the episodes rebuilt after the request.
    const collection = await chromaClient(ctx.runtime.endpoints.chromaUrl).getCollection({ name: exchangeCollection().collectionName(ctx.userKey(u)), embeddingFunction: null as never });
    const left = await collection.get({ include: ['metadatas'] });
    expect(left.metadatas.map((m) => `${m?.conversation_id}/${m?.message_id}`)).not.toContain('c1/c1-m1');
  });

  it('is dropped with the user by a purge', { timeout: 180_000 }, async () => {
    const name = exchangeCollection().collectionName(ctx.userKey(user));
    expect(await collectionExists(name)).toBe(true);
    const res = await ctx.call('DELETE', `/v1/users/${user}?wait=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.counts.chroma).toMatchObject({ exchanges: 1 });
    expect(await collectionExists(name)).toBe(false);
  });
});
