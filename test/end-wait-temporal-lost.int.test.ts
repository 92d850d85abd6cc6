import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFaultProxy } from './support/fault-proxy';
import { temporalClientThrough } from './support/proxied-temporal';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';

// POST …/end?wait=true and POST …/memories when Temporal stops answering after their workflow has
// started (killed, restarted, the network cut): the workflow is durable, so the answer is the
// documented 202 pending, not 500 (end) or 503 "nothing stored" (memories) for work that lands.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

describe('API waits on a workflow while Temporal goes away', () => {
  it('end?wait=true and POST /memories answer 202 pending, and the work still lands after recovery', async () => {
    const user = `${ctx.prefix}-lost`;
    const posted = await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: 'I have a dog named Biscuit.' });
    expect(posted.status).toBe(202);
    // No worker: the run waits, so the API is mid-wait when Temporal goes away.
    await ctx.stopWorker();
    const proxy = await startFaultProxy(inject('stack').temporalAddress);
    const temporal = temporalClientThrough(ctx, proxy.address);
    const api = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue, temporal });
    try {
      const headers = { authorization: `Bearer ${TEST_KEY}` };
      const ended = api.inject({ method: 'POST', url: `/v1/users/${user}/conversations/c1/end?wait=true`, headers, payload: {} });
      const stored = api.inject({ method: 'POST', url: `/v1/users/${user}/memories`, headers, payload: { text: 'I prefer tea to coffee', type: 'preference', requestId: 'lost-1' } });
      // Both workflows are started once they exist; then Temporal disappears.
      const started = (id: string) => ctx.runtime.temporal.workflow.getHandle(id).describe().then(() => true, () => false);
      await poll(() => started(ctx.extractWorkflowId(user, 'c1')), (yes) => yes, 15_000, 100);
      const key = ctx.userKey(user);
      await poll(() => started(`store:${key}:${ctx.runtime.subjects.ref(key, 'request', 'lost-1')}`), (yes) => yes, 15_000, 100);
      await proxy.cut();
      const end = await ended;
      expect(end.statusCode, end.body).toBe(202);
      expect(end.json()).toMatchObject({ workflowId: ctx.extractWorkflowId(user, 'c1'), pending: true });
      expect(end.json().runId).toBeTruthy();
      const memory = await stored;
      expect(memory.statusCode, memory.body).toBe(202);
      expect(memory.json()).toEqual({ workflowId: expect.stringMatching(/^store:/), pending: true });
    } finally {
      await api.close();
      await temporal.connection.close().catch(() => {});
      await ctx.startWorker();
    }
    const memories = await poll(
      () => ctx.call('GET', `/v1/users/${user}/memories`).then((r) => (r.body.memories ?? []) as { text: string }[]),
      (m) => m.length >= 2,
      30_000,
      250,
    );
    expect(memories.map((m) => m.text).join(' | ')).toMatch(/Biscuit/);
    expect(memories.map((m) => m.text).join(' | ')).toMatch(/tea/);
  });
});
