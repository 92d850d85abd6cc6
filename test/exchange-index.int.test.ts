import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChromaExchangeIndex } from '../src/adapters/chroma/chroma-exchange-index';
import { chromaClient } from '../src/adapters/chroma/user-collections';
import { MemoryClient } from '../src/client/index';
import { exchangeVectorId, indexExchanges } from '../src/conversation/exchange-index';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// Dense search over every exchange on the real stack: the indexer (the Schedule's workflow) embeds
// each line into the user's own exchange collection (re-indexing overwrites the pair vectors of
// older deployments), a Chroma outage only
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
  const { rows } = await ctx.runtime.pool.query<{ indexed: string; last: string }>(
    'SELECT exchanges_indexed_seq AS indexed, last_seq AS last FROM conversations WHERE user_id = $1 AND conversation_id = $2',
    [ctx.userKey(user), conversation],
  );
  return { indexed: Number(rows[0]!.indexed), last: Number(rows[0]!.last) };
}

const exchangeCollection = () => ChromaExchangeIndex.create({ url: ctx.runtime.endpoints.chromaUrl, memoryCollection: ctx.runtime.config.chroma.collection });

/** Every exchange vector of a user, pairs and lines, as "unit:conversation/message". */
async function vectorsOf(user: string): Promise<string[]> {
  const index = exchangeCollection();
  const out: string[] = [];
  for (const name of [index.collectionName(ctx.userKey(user)), index.lineCollectionName(ctx.userKey(user))]) {
    if (!(await collectionExists(name))) continue;
    const collection = await chromaClient(ctx.runtime.endpoints.chromaUrl).getCollection({ name, embeddingFunction: null as never });
    out.push(...(await collection.get({ include: ['metadatas'] })).metadatas.map((m) => `${m?.unit}:${m?.conversation_id}/${m?.message_id}`));
  }
  return out.sort();
}

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

  it('gives a reply that came later its own line vector and rewrites its pair (same id, no duplicate)', { timeout: 120_000 }, async () => {
    const index = exchangeCollection();
    const chroma = chromaClient(ctx.runtime.endpoints.chromaUrl);
    const pairs = await chroma.getCollection({ name: index.collectionName(ctx.userKey(user)), embeddingFunction: null as never });
    const lines = await chroma.getCollection({ name: index.lineCollectionName(ctx.userKey(user)), embeddingFunction: null as never });
    // Seven lines, and four pairs (the last user line alone, waiting for its reply).
    expect([await pairs.count(), await lines.count()]).toEqual([4, 7]);
    await say(user, conversation, '2026-03-01T09:00:00Z', [['assistant', 'A cello! Do you take lessons?']], 7);
    await indexerTick('3');
    expect([await pairs.count(), await lines.count()]).toEqual([4, 8]);
    const w = await watermark(user, conversation);
    expect(w.indexed).toBe(w.last);
    const all = await vectorsOf(user);
    expect(all.filter((v) => v.startsWith('line:'))).toEqual(Array.from({ length: 8 }, (_, i) => `line:${conversation}/${conversation}-m${i + 1}`).sort());
    expect(all.filter((v) => v.startsWith('pair:'))).toEqual(['m1', 'm3', 'm5', 'm7'].map((m) => `pair:${conversation}/${conversation}-${m}`));
  });

  it("rewrites an older deployment's unmarked pair vectors when the watermark is reset (as the migration to line vectors does)", { timeout: 120_000 }, async () => {
    const collection = await chromaClient(ctx.runtime.endpoints.chromaUrl).getCollection({ name: exchangeCollection().collectionName(ctx.userKey(user)), embeddingFunction: null as never });
    // A pair vector as the older indexer wrote it: keyed by the pair's first message, with no unit.
    const id = exchangeVectorId(ctx.userKey(user), conversation, `${conversation}-m3`);
    const [stale] = await ctx.runtime.deps.embedder.embedDocuments({ texts: ['something else entirely'] });
    // Chroma merges metadata on upsert: delete first, so the record has no unit at all.
    await collection.delete({ ids: [id] });
    await collection.add({ ids: [id], embeddings: [stale!], metadatas: [{ user_id: ctx.userKey(user), kind: 'exchanges', conversation_id: conversation, message_id: `${conversation}-m3` }] });
    expect((await collection.get({ ids: [id], include: ['metadatas'] })).metadatas[0]?.unit).toBeUndefined();
    await ctx.runtime.pool.query('UPDATE conversations SET exchanges_indexed_seq = 0 WHERE user_id = $1', [ctx.userKey(user)]);
    await indexerTick('reindex');
    expect((await collection.get({ ids: [id], include: ['metadatas'] })).metadatas[0]?.unit).toBe('pair');
    expect(await collection.count()).toBe(4);
  });

  it('finds the answering exchange for a paraphrase that shares no word with it, through exchange_ann', { timeout: 60_000 }, async () => {
    const search = await client.searchConversations(user, { query: 'Which dog breed did we adopt?', topK: 3, now: '2026-03-10T10:00:00Z' });
    const found = search.exchanges.find((x) => x.messageIds.includes(`${conversation}-m3`));
    expect(found, JSON.stringify(search.exchanges.map((x) => [x.user?.text, x.routes]))).toBeDefined();
    expect(found!.routes.filter((r) => r === 'exchange_ann' || r === 'exchange_line_ann').length, JSON.stringify(found!.routes)).toBeGreaterThan(0);
    expect(found!.routes).not.toContain('exchange_bm25');
    expect(search.routes.find((r) => r.route === 'exchange_ann')).toMatchObject({ ok: true });
    // The greeting of the same session is not carried in by the session's episode.
    expect(search.exchanges[0]!.messageIds).toContain(`${conversation}-m3`);
  });

  it('fits a budget counted in lines: the line found, without a partner nothing found', { timeout: 60_000 }, async () => {
    const search = await client.searchConversations(user, { query: 'Which dog breed did we adopt?', maxLines: 3, now: '2026-03-10T10:00:00Z' });
    const lines = search.exchanges.flatMap((x) => x.messageIds);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(search.exchanges[0]!.messageIds).toContain(`${conversation}-m3`);
    for (const x of search.exchanges) expect(x.messageIds).toEqual([x.user?.id, x.assistant?.id].filter((m) => m !== undefined));
    // Without the budget, the same search answers whole exchanges as before.
    const whole = await client.searchConversations(user, { query: 'Which dog breed did we adopt?', topK: 1, now: '2026-03-10T10:00:00Z' });
    expect(whole.exchanges[0]!.messageIds).toEqual([`${conversation}-m3`, `${conversation}-m4`]);
  });

  it('under a line budget, a found question brings the line that answers it, which the pair index never keys with it', { timeout: 120_000 }, async () => {
    const u = 'asked-and-answered';
    await say(u, 'c1', '2026-04-01T10:00:00Z', [
      ['user', 'I finished that novel about the lighthouse keeper last night.'],
      ['assistant', 'Lovely! What did you take away from the lighthouse keeper novel?'],
      ['user', 'Mostly that patience pays off even when nobody is watching.'],
      ['assistant', 'A good lesson to keep.'],
    ]);
    await indexerTick('asked-1');
    const search = await client.searchConversations(u, { query: 'What did I take away from the lighthouse keeper novel?', maxLines: 4, now: '2026-04-02T10:00:00Z' });
    const lines = search.exchanges.flatMap((x) => x.messageIds);
    expect(lines.length).toBeLessThanOrEqual(4);
    const question = search.exchanges.findIndex((x) => x.messageIds.includes('c1-m2'));
    expect(question, JSON.stringify(search.exchanges)).toBeGreaterThanOrEqual(0);
    // The answer comes right after its question, as a line of its own carried by the question's routes.
    const answer = search.exchanges[question + 1];
    expect(answer?.messageIds, JSON.stringify(search.exchanges)).toEqual(['c1-m3']);
    expect(answer!.user?.text).toBe('Mostly that patience pays off even when nobody is watching.');
    expect(answer!.routes).toEqual(search.exchanges[question]!.routes);
    expect(lines.filter((m) => m === 'c1-m3')).toHaveLength(1);
    // Whole exchanges (no line budget) are answered as before.
    const whole = await client.searchConversations(u, { query: 'What did I take away from the lighthouse keeper novel?', topK: 1, now: '2026-04-02T10:00:00Z' });
    expect(whole.exchanges[0]!.messageIds).toEqual(['c1-m1', 'c1-m2']);
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
    expect((await vectorsOf(u)).filter((v) => v.endsWith(':c1/c1-m1'))).toEqual([]);
    // Re-indexing from the start (a migration) never embeds a forgotten line again.
    await ctx.runtime.pool.query('UPDATE conversations SET exchanges_indexed_seq = 0 WHERE user_id = $1', [ctx.userKey(u)]);
    await indexerTick('forget-3');
    const again = await vectorsOf(u);
    expect(again.filter((v) => v.endsWith(':c1/c1-m1'))).toEqual([]);
    expect(again).toContain('line:c1/c1-m2');
  });

  it("takes the vectors of a hard-erased memory's source lines out of Chroma, and rebuilds the pairs around them", { timeout: 180_000 }, async () => {
    const u = 'dense-erase';
    await say(u, 'c1', '2026-02-01T10:00:00Z', [
      ['user', 'I am allergic to frobnitz, it gives me a rash.'],
      ['assistant', 'Understood, I will keep frobnitz out of suggestions.'],
      ['user', 'I am training for a marathon, aiming for under four hours.'],
    ]);
    await client.endConversation(u, 'c1', { wait: true });
    await indexerTick('erase-1');
    const named = async () => (await vectorsOf(u)).map((v) => v.replace('c1/', ''));
    expect(await named()).toEqual(expect.arrayContaining(['line:c1-m1', 'pair:c1-m1']));
    const list = (await ctx.call('GET', `/v1/users/${u}/memories`)).body.memories as { id: string; text: string }[];
    const target = list.find((m) => m.text.includes('frobnitz'));
    expect(target, JSON.stringify(list)).toBeDefined();
    const res = await ctx.call('DELETE', `/v1/users/${u}/memories/${target!.id}?hard=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await named()).not.toEqual(expect.arrayContaining(['line:c1-m1']));
    expect(await named()).not.toEqual(expect.arrayContaining(['pair:c1-m1']));
    // The reply that stays is paired again on its own: no vector holds the erased line's words.
    expect((await watermark(u, 'c1')).indexed).toBe(0);
    await indexerTick('erase-2');
    const after = await named();
    expect(after).toEqual(expect.arrayContaining(['line:c1-m2', 'pair:c1-m2']));
    expect(after.filter((n) => n.endsWith(':c1-m1'))).toEqual([]);
  });

  it('is dropped with the user by a purge', { timeout: 180_000 }, async () => {
    const name = exchangeCollection().collectionName(ctx.userKey(user));
    const lineName = exchangeCollection().lineCollectionName(ctx.userKey(user));
    expect(await collectionExists(name)).toBe(true);
    expect(await collectionExists(lineName)).toBe(true);
    const res = await ctx.call('DELETE', `/v1/users/${user}?wait=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.counts.chroma).toMatchObject({ exchanges: 1 });
    expect(await collectionExists(name)).toBe(false);
    expect(await collectionExists(lineName)).toBe(false);
  });
});
