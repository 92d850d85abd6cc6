import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryClient } from '../src/client/index';
import { indexExchanges } from '../src/conversation/exchange-index';
import { createTestContext, TEST_KEY, type TestContext, useTestContext } from './support/harness';

// Recall on the real stack (PostgreSQL, Chroma, e5): a past exchange that answers a question asked
// in other words reaches the context through the exchange vectors (the calibrated floor), a query
// that only shares a topic word with it does not, and no user's exchange reaches another's recall.

// Correctness, not latency, is tested here: a shared 2-core machine can make one e5 call slow.
const stack = useTestContext({ RECALL_TIMEOUT_MS: '20000' });

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

/** Stores lines of a conversation still going on: nothing is extracted, the raw exchange is all there is. */
async function say(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][]): Promise<string[]> {
  const messages = lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 30) }));
  await stack.client.addMessages(user, conversation, messages);
  return messages.map((m) => m.id);
}

const NOW = '2026-08-20T10:00:00Z';

describe('recall: exchanges that answer in other words', () => {
  const alice = 'para-alice';
  const bob = 'para-bob';
  let skinIds: string[];
  let backIds: string[];
  let bobIds: string[];

  beforeAll(async () => {
    skinIds = await say(alice, 'skin', '2026-08-01T09:00:00Z', [
      ['user', 'The dermatologist says the rash on my arms is contact eczema from the new laundry detergent.'],
      ['assistant', 'Switching to a fragrance-free detergent and a mild steroid cream usually clears it in a couple of weeks.'],
    ]);
    backIds = await say(alice, 'back', '2026-08-03T09:00:00+08:00', [
      ['user', '上周去医院，骨科大夫说我腰椎间盘突出，让我别再搬重物了。'],
      ['assistant', '平时坐久了起来活动一下，睡硬一点的床垫，疼得厉害再去做理疗。'],
    ]);
    bobIds = await say(bob, 'neck', '2026-08-04T09:00:00+08:00', [
      ['user', '骨科大夫说我颈椎曲度变直，建议每天做颈部拉伸。'],
      ['assistant', '低头看手机的时间少一点，拉伸时动作放慢。'],
    ]);
    // The exchange indexer's tick (its Schedule runs it off the hot path).
    const indexed = await indexExchanges(stack.ctx.runtime.deps, { limit: 1000, budgetMs: 120_000 });
    expect(indexed.failed).toBe(0);
  }, 180_000);

  it('injects the exchange that answers a paraphrased English question, found by vector alone', async () => {
    const r = await stack.client.recall(alice, { query: 'What did the skin doctor tell me about my arms?', now: NOW });
    expect(r.error).toBeUndefined();
    expect(r.injectedMessageIds).toEqual(expect.arrayContaining(skinIds));
    expect(r.context.userPrefix).toContain('contact eczema');
    const x = r.pastExchanges.find((p) => p.conversationId === 'skin')!;
    expect(x.routes).toEqual(['exchange_ann']);
    expect(r.routes.find((route) => route.route === 'exchange_ann')?.ok).toBe(true);
  });

  it('injects the exchange that answers a paraphrased Chinese question, found by vector alone', async () => {
    const r = await stack.client.recall(alice, { query: '医生对我的背痛是怎么诊断的？', now: NOW });
    expect(r.error).toBeUndefined();
    expect(r.injectedMessageIds).toEqual(expect.arrayContaining(backIds));
    expect(r.context.userPrefix).toContain('腰椎间盘突出');
    expect(r.pastExchanges.find((p) => p.conversationId === 'back')!.routes).toEqual(['exchange_ann']);
  });

  it('leaves out an exchange that only shares a topic word with the query', async () => {
    const en = await stack.client.recall(alice, { query: 'What is a good arm workout for the gym?', now: NOW });
    expect(en.error).toBeUndefined();
    expect(en.injectedMessageIds).not.toEqual(expect.arrayContaining([skinIds[0]]));
    expect(en.context.userPrefix).not.toContain('eczema');
    const zh = await stack.client.recall(alice, { query: '医院附近有什么好吃的？', now: NOW });
    expect(zh.error).toBeUndefined();
    expect(zh.context.userPrefix).not.toContain('腰椎');
    // Small talk brings nothing in either.
    const hi = await stack.client.recall(alice, { query: '哈哈好的，谢谢', now: NOW });
    expect(hi.pastExchanges).toEqual([]);
  });

  it("never shows one user's exchange to another, even when it answers the question", async () => {
    const r = await stack.client.recall(alice, { query: '骨科大夫说我颈椎怎么了？', now: NOW });
    expect(r.error).toBeUndefined();
    expect(r.context.userPrefix).not.toContain('颈椎曲度');
    expect(r.injectedMessageIds.some((id) => bobIds.includes(id))).toBe(false);
    expect(r.pastExchanges.every((p) => p.conversationId !== 'neck')).toBe(true);
    // Bob's own recall finds it, so it was indexed and searchable.
    const own = await stack.client.recall(bob, { query: '医生说我脖子有什么问题？', now: NOW });
    expect(own.injectedMessageIds).toEqual(expect.arrayContaining(bobIds));
  });
});

describe('recall: vector-found exchanges and memories on one score', () => {
  const dana = 'para-dana';
  const lines: [role: 'user' | 'assistant', content: string][] = [
    ['user', 'The dermatologist says the rash on my arms is contact eczema from the new laundry detergent.'],
    ['assistant', 'Switching to a fragrance-free detergent and a mild steroid cream usually clears it in a couple of weeks.'],
  ];
  const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

  it('keeps the answering exchange in the default budget beside the memories the ANN route lists', { timeout: 180_000 }, async () => {
    const facts = [
      'I live in Porto with my partner',
      'I work as a data engineer',
      'I go to the gym on Mondays and Thursdays',
      'I prefer tea over coffee',
      'My goal is to run a half marathon in spring',
      'I am learning to play the cello',
      'My sister lives in Lisbon',
      'I use a fragrance-free moisturizer in winter',
      'I dislike crowded restaurants',
      'My laptop is a ThinkPad',
    ];
    for (const text of facts) await stack.client.createMemory(dana, { text, type: 'fact' });
    await stack.client.addMessages(dana, 'skin', lines.map(([role, content], i) => ({ id: `skin-m${i + 1}`, role, content, at: at('2026-08-01T09:00:00Z', i * 30) })));
    await indexExchanges(stack.ctx.runtime.deps, { limit: 1000, budgetMs: 120_000 });
    const r = await stack.client.recall(dana, { query: 'What did the skin doctor tell me about my arms?', now: NOW });
    expect(r.error).toBeUndefined();
    expect(r.memories.length).toBeGreaterThan(0);
    expect(r.injectedMessageIds).toEqual(expect.arrayContaining(['skin-m1', 'skin-m2']));
    expect(r.context.userPrefix).toContain('contact eczema');
  });

  it('injects a memory that the vector-found exchange repeats once', async () => {
    await stack.client.createMemory(dana, { text: 'The rash on my arms is contact eczema from the new laundry detergent', type: 'fact' });
    const r = await stack.client.recall(dana, { query: 'What did the skin doctor tell me about my arms?', now: NOW });
    expect(r.error).toBeUndefined();
    // Once in the whole context: in the memories, or in the persona (system) when its debounced
    // rebuild has already run and states it, which leaves it out of the memories.
    expect(occurrences(`${r.context.system}\n${r.context.userPrefix}`, 'contact eczema')).toBe(1);
    // The distilled memory stays (the question is not about what was said); the exchange is dropped.
    expect(r.memories.some((m) => m.text.includes('contact eczema'))).toBe(true);
    expect(r.injectedMessageIds).not.toContain('skin-m1');
  });
});

describe('recall with the vector evidence switched off (floors at 1)', () => {
  let off: TestContext;
  afterAll(async () => {
    await off?.close();
  });

  it('misses the paraphrased answer: only lines sharing the query words count then', { timeout: 180_000 }, async () => {
    off = await createTestContext({ RECALL_TIMEOUT_MS: '20000', RECALL_EXCHANGE_MIN_SIMILARITY: '1', RECALL_EXCHANGE_MIN_SIMILARITY_CJK: '1' });
    const offClient = new MemoryClient({ baseUrl: off.baseUrl, apiKey: TEST_KEY });
    const lines: [role: 'user' | 'assistant', content: string][] = [
      ['user', 'The dermatologist says the rash on my arms is contact eczema from the new laundry detergent.'],
      ['assistant', 'Switching to a fragrance-free detergent and a mild steroid cream usually clears it in a couple of weeks.'],
    ];
    await offClient.addMessages('para-carol', 'skin', lines.map(([role, content], i) => ({ id: `skin-m${i + 1}`, role, content, at: at('2026-08-01T09:00:00Z', i * 30) })));
    await indexExchanges(off.runtime.deps, { limit: 1000, budgetMs: 120_000 });
    const r = await offClient.recall('para-carol', { query: 'What did the skin doctor tell me about my arms?', now: NOW });
    expect(r.error).toBeUndefined();
    expect(r.context.userPrefix).not.toContain('eczema');
    expect(r.routes.some((route) => route.route === 'exchange_ann')).toBe(false);
  });
});
