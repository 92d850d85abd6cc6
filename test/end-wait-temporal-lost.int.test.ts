import { createServer, connect, type Server, type Socket } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';

// POST …/end?wait=true when Temporal stops answering after the run has started (killed, restarted,
// the network cut): the run is durable, so the answer is the documented 202 pending, not 500.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

/** A TCP forwarder to Temporal that the test can cut, as a dead Temporal or network looks to the API. */
async function cuttableProxy(target: string): Promise<{ address: string; cut: () => Promise<void> }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    address: `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    cut: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

describe('end?wait=true while Temporal goes away', () => {
  it('answers 202 pending with the run id, and the run still extracts after recovery', async () => {
    const user = `${ctx.prefix}-lost`;
    const posted = await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: 'I have a dog named Biscuit.' });
    expect(posted.status).toBe(202);
    // No worker: the run waits, so the API is mid-wait when Temporal goes away.
    await ctx.stopWorker();
    const proxy = await cuttableProxy(inject('stack').temporalAddress);
    const temporal = new Client({
      connection: Connection.lazy({ address: proxy.address }),
      namespace: ctx.runtime.config.temporal.namespace,
      dataConverter: ctx.runtime.dataConverter,
      interceptors: ctx.runtime.temporal.options.interceptors,
    });
    const api = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue, temporal });
    try {
      const answer = api.inject({ method: 'POST', url: `/v1/users/${user}/conversations/c1/end?wait=true`, headers: { authorization: `Bearer ${TEST_KEY}` }, payload: {} });
      // The run is started once its workflow exists; then Temporal disappears.
      await poll(
        () => ctx.runtime.temporal.workflow.getHandle(ctx.extractWorkflowId(user, 'c1')).describe().then(() => true, () => false),
        (started) => started,
        15_000,
        100,
      );
      await proxy.cut();
      const res = await answer;
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({ workflowId: ctx.extractWorkflowId(user, 'c1'), pending: true });
      expect(res.json().runId).toBeTruthy();
    } finally {
      await api.close();
      await temporal.connection.close().catch(() => {});
      await ctx.startWorker();
    }
    const memories = await poll(
      () => ctx.call('GET', `/v1/users/${user}/memories`).then((r) => (r.body.memories ?? []) as { text: string }[]),
      (m) => m.length >= 1,
      30_000,
      250,
    );
    expect(memories.map((m) => m.text).join(' | ')).toMatch(/Biscuit/);
  });
});
