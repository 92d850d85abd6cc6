import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RulePool } from '../src/adapters/extraction/rule-pool';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// A message batch is segmented for conversation search on the rule pool's threads before anything
// is stored. Here one text of a batch never finishes segmenting (the test worker spins on it): the
// API keeps serving another user meanwhile, and the batch is refused at its time limit with
// nothing of it written, rather than stored without its index or holding the conversation's lock.

const SLOW_WORKER = fileURLToPath(new URL('./fixtures/slow-rule-worker.mjs', import.meta.url));
const SPIN = '\u27e6spin\u27e7';
// Long enough that the other user's request is answered first on a loaded machine too; the order
// of the two answers is what the test reads, never a duration.
const INDEX_LIMIT_MS = 15_000;

let ctx: TestContext;
let api: FastifyInstance;
let pool: RulePool;
beforeAll(async () => {
  ctx = await createTestContext();
  pool = new RulePool({ threads: 2, messageTimeoutMs: 5000, screenTimeoutMs: 20_000, indexTimeoutMs: INDEX_LIMIT_MS, inlineIndexMaxChars: 0, filename: SLOW_WORKER });
  // An API built after the swap segments on the test pool; runtime.close() closes it.
  ctx.runtime.deps.rules = pool;
  api = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue });
});
afterAll(async () => {
  await api?.close();
  await ctx?.close();
});

const post = (userId: string, conversationId: string, messages: { id: string; role: 'user' | 'assistant'; content: string }[]) =>
  api.inject({ method: 'POST', url: `/v1/users/${userId}/conversations/${conversationId}/messages`, headers: { authorization: `Bearer ${TEST_KEY}` }, payload: { messages } });

async function rowsOf(userId: string): Promise<{ messages: number; postings: number; conversations: number }> {
  const { rows } = await ctx.runtime.pool.query<{ messages: string; postings: string; conversations: string }>(
    `SELECT (SELECT count(*) FROM messages WHERE user_id = $1) AS messages,
            (SELECT count(*) FROM message_terms WHERE user_id = $1) AS postings,
            (SELECT count(*) FROM conversations WHERE user_id = $1) AS conversations`,
    [ctx.userKey(userId)],
  );
  return { messages: Number(rows[0]!.messages), postings: Number(rows[0]!.postings), conversations: Number(rows[0]!.conversations) };
}

describe('a batch whose segmentation runs out of its time', () => {
  it('is refused with 413 index_time_limit and nothing written, while another user is served meanwhile', async () => {
    const hostile = `${ctx.prefix}-mallory`;
    const other = `${ctx.prefix}-bob`;
    const batch = Array.from({ length: 40 }, (_, i) => ({ id: `h${i}`, role: 'user' as const, content: `第${i}条：我喜欢喝绿茶，也喜欢 green tea。` }));
    const spinning = batch.map((m, i) => (i === 20 ? { ...m, content: `${m.content}${SPIN}` } : m));

    const settled: string[] = [];
    const refused = post(hostile, 'c1', spinning).then((res) => {
      settled.push('hostile batch');
      return res;
    });
    const served = await post(other, 'c1', [{ id: 'm1', role: 'user', content: '我对花生过敏，吃了会起疹子。' }]);
    settled.push('other user');
    expect(served.statusCode, served.body).toBe(202);
    expect(served.json().accepted).toEqual(['m1']);

    const res = await refused;
    // The other user's append (segmented on the pool's other thread) was answered while the batch waited on its own.
    expect(settled).toEqual(['other user', 'hostile batch']);
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error).toMatchObject({ code: 'payload_too_large', details: { conversationId: 'c1', reason: 'index_time_limit' } });
    expect(pool.timeouts).toBe(1);
    expect(await rowsOf(hostile)).toEqual({ messages: 0, postings: 0, conversations: 0 });
    expect((await rowsOf(other)).messages).toBe(1);

    // Without the text that never finishes, the same batch is stored whole, with its postings.
    const retried = await post(hostile, 'c1', batch);
    expect(retried.statusCode, retried.body).toBe(202);
    expect(retried.json().accepted).toHaveLength(40);
    const stored = await rowsOf(hostile);
    expect(stored.messages).toBe(40);
    expect(stored.postings).toBeGreaterThan(40);
  }, 120_000);
});
