import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryClient } from '../src/client/index';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// One user's backlog of long messages and another user's short new conversation, on the real
// stack: one run of the indexer indexes the short conversation and moves the backlog by a bounded
// step, instead of spending the run (and, on a busy embedder, the heartbeat) on the backlog alone.

let ctx: TestContext;
let client: MemoryClient;
beforeAll(async () => {
  ctx = await createTestContext();
  client = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
});
afterAll(async () => {
  await ctx?.close();
});

const longCjk = '我们昨天去了北京的故宫博物院，看到了很多古代的文物和建筑，非常壮观。'.repeat(60);

async function watermark(user: string, conversation: string): Promise<{ indexed: number; last: number }> {
  const { rows } = await ctx.runtime.pool.query<{ indexed: string; last: string }>(
    'SELECT exchanges_indexed_seq AS indexed, last_seq AS last FROM conversations WHERE user_id = $1 AND conversation_id = $2',
    [ctx.userKey(user), conversation],
  );
  return { indexed: Number(rows[0]!.indexed), last: Number(rows[0]!.last) };
}

describe('exchange indexer fairness', () => {
  it("indexes another user's short conversation in the same run as a long backlog, which moves by a bounded step", { timeout: 180_000 }, async () => {
    await client.addMessages(
      'backlog-heavy',
      'c-long',
      Array.from({ length: 16 }, (_, i) => ({ id: `long-m${i + 1}`, role: i % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `${i} ${longCjk}`, at: new Date(Date.UTC(2026, 2, 1, 9, i)).toISOString() })),
    );
    await client.addMessages('backlog-light', 'c-short', [
      { id: 's1', role: 'user', content: 'Which museum did we visit in Beijing?', at: '2026-03-02T10:00:00Z' },
      { id: 's2', role: 'assistant', content: 'The Palace Museum, in the Forbidden City.', at: '2026-03-02T10:00:30Z' },
    ]);

    // A per-user bound of a few long lines, so the step is visible without a heavy load on the embedder.
    const run = await ctx.runtime.temporal.workflow.execute('exchangeIndexWorkflow', { taskQueue: ctx.taskQueue, workflowId: `${ctx.prefix}-fair-index`, args: [{ userTokens: 4_000 }] });
    expect(run).toMatchObject({ conversations: 2, failed: 0, deferred: 1 });

    const light = await watermark('backlog-light', 'c-short');
    expect(light.indexed).toBe(light.last);
    const heavy = await watermark('backlog-heavy', 'c-long');
    expect(heavy.indexed).toBeGreaterThan(0);
    expect(heavy.indexed).toBeLessThan(heavy.last);
  });
});
