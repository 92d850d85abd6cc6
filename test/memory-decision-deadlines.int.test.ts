import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { temporalClientThrough } from './support/proxied-temporal';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';

// The decisions the API takes about one memory (forget, erase, restore, confirm) run as a
// MemoryDecision workflow. With Temporal hanging (connections open, nothing answered), they held
// the request open for as long as the hang lasted. Now they answer within their bounds: 503 when
// Temporal took nothing, 202 pending when the decision was accepted and goes on.

const CALL_MS = 1_500;
let ctx: TestContext;
let proxy: FaultProxy;
let temporal: Client;
let api: FastifyInstance;

beforeAll(async () => {
  ctx = await createTestContext({ TEMPORAL_CALL_TIMEOUT_MS: String(CALL_MS) });
  proxy = await startFaultProxy(inject('stack').temporalAddress);
  temporal = temporalClientThrough(ctx, proxy.address);
  api = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue, temporal });
});
afterAll(async () => {
  await api?.close();
  await temporal?.connection.close().catch(() => {});
  await proxy?.close();
  await ctx?.close();
});

/** The answer of the proxied API, or `no answer` once `ms` have passed (the request is left hanging). */
async function answer(method: 'DELETE' | 'POST', url: string, ms: number): Promise<{ status: number; body: any } | 'no answer'> {
  const reply = api.inject({ method, url, headers: { authorization: `Bearer ${TEST_KEY}` }, ...(method === 'POST' ? { payload: {} } : {}) }).then((r) => ({ status: r.statusCode, body: r.json() }));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'no answer'>((resolve) => {
    timer = setTimeout(() => resolve('no answer'), ms);
  });
  try {
    return await Promise.race([reply, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function memoryOf(user: string, text: string): Promise<string> {
  const created = await ctx.call('POST', `/v1/users/${user}/memories`, { text, type: 'fact' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.memory.id as string;
}

const statusOf = async (user: string, id: string) => (await ctx.call('GET', `/v1/users/${user}/memories/${id}`)).body.memory?.status as string | undefined;

describe('memory decisions while Temporal hangs', () => {
  it('forget, erase, restore and confirm answer 503 workflowUnavailable within TEMPORAL_CALL_TIMEOUT_MS, and nothing changes', async () => {
    const user = `${ctx.prefix}-hung`;
    const id = await memoryOf(user, 'I play the oboe in a community orchestra');
    proxy.hang();
    try {
      const base = `/v1/users/${user}/memories/${id}`;
      for (const [method, url] of [['DELETE', base], ['DELETE', `${base}?hard=true`], ['POST', `${base}/restore`], ['POST', `${base}/confirm`]] as const) {
        const t0 = Date.now();
        const res = await answer(method, url, CALL_MS + 10_000);
        expect(res, `${method} ${url}`).not.toBe('no answer');
        if (res === 'no answer') continue;
        expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(503);
        expect(res.body.error.code).toBe('workflowUnavailable');
        expect(Date.now() - t0).toBeLessThan(CALL_MS + 5_000);
      }
    } finally {
      await proxy.restore();
    }
    expect(await statusOf(user, id)).toBe('active');
  });

  it('a forget accepted before Temporal hangs answers 202 pending after WORKFLOW_WAIT_TIMEOUT_MS, and is applied once Temporal and a worker are back', async () => {
    const user = `${ctx.prefix}-accepted`;
    const id = await memoryOf(user, 'My train pass expires in June');
    const config = ctx.runtime.config.reliability;
    const previous = config.workflowWaitMs;
    // No worker: the decision waits in Temporal, so the API is mid-wait when Temporal hangs.
    await ctx.stopWorker();
    config.workflowWaitMs = 4_000;
    try {
      const pending = answer('DELETE', `/v1/users/${user}/memories/${id}`, 30_000);
      const started = await poll(
        async () => {
          for await (const w of ctx.runtime.temporal.workflow.list({ query: `WorkflowType = 'MemoryDecision' AND MemoryUserId = '${ctx.userKey(user)}'` })) return w.workflowId;
          return undefined;
        },
        (w) => w !== undefined,
        15_000,
        100,
      );
      expect(started).toMatch(/^forget:/);
      proxy.hang();
      const res = await pending;
      expect(res).not.toBe('no answer');
      if (res === 'no answer') return;
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body).toEqual({ workflowId: started, pending: true });
    } finally {
      config.workflowWaitMs = previous;
      await proxy.restore();
      await ctx.startWorker();
    }
    expect(await poll(() => statusOf(user, id), (s) => s === 'expired', 30_000, 250)).toBe('expired');
  });

  it('with Temporal healthy and no worker, a restore answers 202 pending instead of holding the request, and lands when a worker is back', async () => {
    const user = `${ctx.prefix}-noworker`;
    const id = await memoryOf(user, 'I am allergic to penicillin');
    // Archived as the nightly sweep leaves an unused memory.
    await ctx.runtime.pool.query(`UPDATE memories SET status = 'archived' WHERE user_id = $1 AND id = $2`, [ctx.userKey(user), id]);
    const config = ctx.runtime.config.reliability;
    const previous = config.workflowWaitMs;
    await ctx.stopWorker();
    config.workflowWaitMs = 2_000;
    try {
      const res = await answer('POST', `/v1/users/${user}/memories/${id}/restore`, 15_000);
      expect(res).not.toBe('no answer');
      if (res === 'no answer') return;
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body).toEqual({ workflowId: expect.stringMatching(/^restore:/), pending: true });
    } finally {
      config.workflowWaitMs = previous;
      await ctx.startWorker();
    }
    expect(await poll(() => statusOf(user, id), (s) => s === 'active', 30_000, 250)).toBe('active');
  });
});
