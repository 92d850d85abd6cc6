import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';

// POST …/memories with a requestId that was used before for another body: a client bug (a counter
// reset, an id reused by mistake) must not be told its second text is stored when the first one
// is. The same id with the same body stays an idempotent retry.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const memoriesOf = async (user: string) => (await ctx.call('GET', `/v1/users/${user}/memories`)).body.memories as { id: string; text: string }[];
const decisionsOf = async (user: string) =>
  (await ctx.runtime.pool.query<{ n: string }>(`SELECT count(*) AS n FROM memory_events WHERE user_id = $1 AND idempotency_key LIKE 'api:%'`, [ctx.userKey(user)])).rows[0]!.n;

describe('a requestId sent again', () => {
  it('with another text is refused with 422 and nothing written; the same body (at omitted, keys in another order) is the first memory', async () => {
    const user = `${ctx.prefix}-text`;
    const body = { text: 'I keep my passport in the blue folder', type: 'fact', keywords: ['passport', 'folder'], metadata: { source: 'notes', tags: { a: 1, b: 2 } }, requestId: 'req-1' };
    const first = await ctx.call('POST', `/v1/users/${user}/memories`, body);
    expect(first.status, JSON.stringify(first.body)).toBe(201);

    const other = await ctx.call('POST', `/v1/users/${user}/memories`, { ...body, text: 'I keep my keys under the doormat' });
    expect(other.status, JSON.stringify(other.body)).toBe(422);
    expect(other.body.error).toMatchObject({ code: 'request_id_reused', details: { requestId: 'req-1' } });
    for (const changed of [{ type: 'preference' }, { importance: 0.9 }, { keywords: ['folder', 'passport'] }, { metadata: { source: 'chat' } }, { via: 'mcp' }, { at: '2026-01-01T00:00:00Z' }]) {
      const res = await ctx.call('POST', `/v1/users/${user}/memories`, { ...body, ...changed });
      expect(res.status, `${JSON.stringify(changed)}: ${JSON.stringify(res.body)}`).toBe(422);
    }

    // The same write, serialised differently: object keys reordered, `at` omitted as the first time.
    const again = await ctx.call('POST', `/v1/users/${user}/memories`, { requestId: 'req-1', metadata: { tags: { b: 2, a: 1 }, source: 'notes' }, keywords: ['passport', 'folder'], type: 'fact', text: body.text });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.memory.id).toBe(first.body.memory.id);
    expect((await memoriesOf(user)).map((m) => m.text)).toEqual([body.text]);
    expect(await decisionsOf(user)).toBe('1');
  });

  it('with an explicit time: the same instant written in another offset is the same body', async () => {
    const user = `${ctx.prefix}-at`;
    const first = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'My sister lives in Porto', type: 'fact', at: '2026-03-01T08:00:00+08:00', requestId: 'req-at' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const same = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'My sister lives in Porto', type: 'fact', at: '2026-03-01T00:00:00.000Z', requestId: 'req-at' });
    expect(same.status, JSON.stringify(same.body)).toBe(201);
    expect(same.body.memory.id).toBe(first.body.memory.id);
    // Omitting a time the first request gave is another body: the server would date it now.
    const undated = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'My sister lives in Porto', type: 'fact', requestId: 'req-at' });
    expect(undated.status, JSON.stringify(undated.body)).toBe(422);
  });

  it('by two concurrent requests with different bodies: exactly one is stored, the other answers 422', async () => {
    for (let round = 0; round < 4; round++) {
      const user = `${ctx.prefix}-race${round}`;
      const texts = [`My locker code is ${1000 + round}`, `My bike is red, round ${round}`];
      const answers = await Promise.all(texts.map((text) => ctx.call('POST', `/v1/users/${user}/memories`, { text, type: 'fact', requestId: 'same-id' })));
      expect(answers.map((a) => a.status).sort(), JSON.stringify(answers.map((a) => a.body))).toEqual([201, 422]);
      const winner = answers.find((a) => a.status === 201)!;
      expect(answers.find((a) => a.status === 422)!.body.error.code).toBe('request_id_reused');
      expect((await memoriesOf(user)).map((m) => m.text)).toEqual([winner.body.memory.text]);
    }
  });

  it('through another API process is checked the same way (nothing is kept in one process)', async () => {
    const user = `${ctx.prefix}-procs`;
    const first = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I am learning the cello', type: 'fact', requestId: 'req-p' });
    expect(first.status).toBe(201);
    const second = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue });
    try {
      const headers = { authorization: `Bearer ${TEST_KEY}` };
      const other = await second.inject({ method: 'POST', url: `/v1/users/${user}/memories`, headers, payload: { text: 'I am learning the violin', type: 'fact', requestId: 'req-p' } });
      expect(other.statusCode, other.body).toBe(422);
      const same = await second.inject({ method: 'POST', url: `/v1/users/${user}/memories`, headers, payload: { text: 'I am learning the cello', type: 'fact', requestId: 'req-p' } });
      expect(same.statusCode, same.body).toBe(201);
      expect(same.json().memory.id).toBe(first.body.memory.id);
    } finally {
      await second.close();
    }
  });

  it('while the first is still running: the same body answers 202 pending, another body 422 at once', async () => {
    const user = `${ctx.prefix}-pending`;
    const config = ctx.runtime.config.reliability;
    const previous = config.workflowWaitMs;
    await ctx.stopWorker();
    config.workflowWaitMs = 1_000;
    try {
      const body = { text: 'My dentist is Dr. Okafor', type: 'fact', requestId: 'req-run' };
      const first = await ctx.call('POST', `/v1/users/${user}/memories`, body);
      expect(first.status, JSON.stringify(first.body)).toBe(202);
      const retry = await ctx.call('POST', `/v1/users/${user}/memories`, body);
      expect(retry.status, JSON.stringify(retry.body)).toBe(202);
      expect(retry.body.workflowId).toBe(first.body.workflowId);
      const other = await ctx.call('POST', `/v1/users/${user}/memories`, { ...body, text: 'My dentist is Dr. Smith' });
      expect(other.status, JSON.stringify(other.body)).toBe(422);
      expect(other.body.error.code).toBe('request_id_reused');
    } finally {
      config.workflowWaitMs = previous;
      await ctx.startWorker();
    }
    const stored = await poll(() => memoriesOf(user), (m) => m.length > 0, 30_000, 250);
    expect(stored.map((m) => m.text)).toEqual(['My dentist is Dr. Okafor']);
    const done = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'My dentist is Dr. Okafor', type: 'fact', requestId: 'req-run' });
    expect(done.status, JSON.stringify(done.body)).toBe(201);
  });
});
