import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractEntities } from '../src/core/extraction/entities';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { recall } from '../src/recall/recall';
import { graphRouteIds } from '../src/recall/graph-route';
import { createTestContext, type TestContext } from './support/harness';
import { seedMemories } from './support/seed';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const now = new Date('2026-06-02T00:00:00Z');

/** Seeds the memories and links their entities the way the write path does (extractor → graph.link). */
async function seedWithGraph(user: string, texts: { text: string; lang: 'zh' | 'en' }[]): Promise<string[]> {
  const ids = await seedMemories(ctx.runtime.deps, user, texts.map((t) => ({ text: t.text, type: 'preference' as const })));
  await ctx.runtime.deps.unitOfWork.forUser({
    userId: user,
    work: async (tx) => {
      for (const [i, t] of texts.entries()) {
        await tx.graph.link({ userId: user, memoryId: ids[i]!, entities: extractEntities(t.text, t.lang, jiebaSegmenter), relations: [] });
      }
    },
  });
  return ids;
}

describe('graph recall on the real stack', () => {
  it('answers "what do my sister and I both like" with the zh and the en memory about the sister, through the graph route', async () => {
    const user = `${ctx.prefix}-sister`;
    const [zh, en] = await seedWithGraph(user, [
      { text: '我姐姐特别喜欢吃火锅', lang: 'zh' },
      { text: 'My sister is really into bouldering', lang: 'en' },
      { text: '我每天早上喝美式咖啡', lang: 'zh' },
      { text: 'I started learning Rust last month', lang: 'en' },
    ]);
    const r = await recall(ctx.runtime.deps, user, 'what do my sister and I both like', { now });
    const graph = r.routes.find((x) => x.route === 'graph');
    expect(graph).toMatchObject({ ok: true, hits: 2 });
    const viaGraph = await graphRouteIds(ctx.runtime.deps.graphRecall!, { userId: user, query: 'what do my sister and I both like', now, k: 10 });
    expect(new Set(viaGraph)).toEqual(new Set([zh, en]));
    const ids = r.memories.map((m) => m.id);
    expect(ids).toContain(zh);
    expect(ids).toContain(en);
  });

  it('walks a second hop: a query about the sister reaches the memory about the city named beside her', async () => {
    const user = `${ctx.prefix}-hop`;
    const [moved, city, other] = await seedWithGraph(user, [
      { text: '我妹妹去年搬到了杭州', lang: 'zh' },
      { text: '杭州的西湖边有家很好吃的面馆', lang: 'zh' },
      { text: '我在学弹吉他', lang: 'zh' },
    ]);
    const ids = await graphRouteIds(ctx.runtime.deps.graphRecall!, { userId: user, query: '我妹在哪个城市，那里有什么好吃的', now, k: 10 });
    expect(ids[0]).toBe(moved);
    expect(ids).toContain(city);
    expect(ids).not.toContain(other);
  });

  it('is scoped by user: another user\'s sister is never reached', async () => {
    const a = `${ctx.prefix}-scope-a`;
    const b = `${ctx.prefix}-scope-b`;
    const [mine] = await seedWithGraph(a, [{ text: 'My sister loves hiking', lang: 'en' }]);
    const [theirs] = await seedWithGraph(b, [{ text: 'My sister loves sushi', lang: 'en' }]);
    const ids = await graphRouteIds(ctx.runtime.deps.graphRecall!, { userId: a, query: 'what does my sister like', now, k: 10 });
    expect(ids).toEqual([mine]);
    expect(ids).not.toContain(theirs);
  });

  it('runs no walk and finds nothing when the query names none of the user\'s entities', async () => {
    const user = `${ctx.prefix}-none`;
    await seedWithGraph(user, [{ text: 'My sister loves hiking', lang: 'en' }]);
    const r = await recall(ctx.runtime.deps, user, 'how is the weather', { now });
    expect(r.routes.find((x) => x.route === 'graph')).toMatchObject({ ok: true, hits: 0 });
  });
});
