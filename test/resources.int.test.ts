import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from './support/fake-openai';
import { createTestContext, OTHER_TENANT_KEY, TEST_KEY, type TestContext } from './support/harness';
import { openSse, type SseStream } from './support/sse';
import { poll } from './support/poll';

/**
 * Bounded resources per caller, on the real stack: exports that do not pin a pooled connection
 * for a slow reader and are limited per tenant and charged by cost, a cap on open event streams,
 * and a proxy that lets through only what the tenant's policy allows and keeps upstream errors
 * to itself.
 */

const UPSTREAM_KEY = 'upstream-secret-key-resources-0123456789';
const upstream = new FakeOpenAI();
const SLOW_EXPORTS = 10; // the API pool's size (src/adapters/postgres/pool.ts)
let ctx: TestContext;
let big: string;

/** A GET of the export that reads the first bytes and then stops reading (a paused, slow client). */
function slowExport(c: TestContext, userId: string): Promise<{ res: IncomingMessage; first: Buffer; ended: () => boolean; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${c.baseUrl}/v1/users/${userId}/export`, { headers: { authorization: `Bearer ${TEST_KEY}` } }, (res) => {
      let ended = false;
      res.once('end', () => (ended = true));
      res.once('data', (first: Buffer) => {
        res.pause();
        resolve({ res, first, ended: () => ended, close: () => req.destroy() });
      });
      res.once('error', () => {});
    });
    req.once('error', reject);
    req.end();
  });
}

const inTransaction = async (c: TestContext) =>
  Number(
    (await c.runtime.pool.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`)).rows[0]!.n,
  );

beforeAll(async () => {
  await upstream.start();
  ctx = await createTestContext({
    EXPORT_CONCURRENCY_PER_TENANT: String(SLOW_EXPORTS + 2),
    RATE_LIMIT_EXPORT_UNITS_PER_USER: '100000',
    RATE_LIMIT_EXPORT_UNITS_PER_KEY: '100000',
    SSE_MAX_STREAMS_PER_USER: '2',
    SSE_MAX_STREAMS_PER_KEY: '4',
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_API_KEY: UPSTREAM_KEY,
    PROXY_ALLOWED_MODELS: 'gpt-test,upstream-error,upstream-429,upstream-500,upstream-slow',
    PROXY_MAX_N: '2',
    PROXY_MAX_TOKENS: '2048',
    PROXY_TOKENS_PER_UNIT: '1024',
    PROXY_TENANT_POLICIES: JSON.stringify({ 'tenant-b': { models: '*', tools: true } }),
    PROXY_UPSTREAM_TIMEOUT_MS: '1500',
    PROXY_RECALL_TIMEOUT_MS: '3000',
    RATE_LIMIT_LLM_PER_USER: '10',
  });
  // A user whose export is far larger than the socket buffers between the API and a paused client
  // (about 18 MB), so a streaming export would stop mid-document with its snapshot open.
  big = `${ctx.prefix}-big`;
  expect((await ctx.call('POST', `/v1/users/${big}/conversations/c1/messages`, { id: 'm0', role: 'user', content: 'hello' })).status).toBe(202);
  await ctx.runtime.pool.query(
    `INSERT INTO messages (user_id, conversation_id, message_id, role, content, said_at)
     SELECT $1, 'c1', 'bulk-' || i, 'user', repeat('x', 3000) || i, now() - (i || ' seconds')::interval FROM generate_series(1, 6000) i`,
    [ctx.userKey(big)],
  );
}, 120_000);

afterAll(async () => {
  await ctx?.close();
  await upstream.stop();
});

describe('exports', () => {
  it('a paused client holds no pooled connection and no open snapshot; the document is whole when it resumes', async () => {
    const pool = ctx.runtime.pool;
    const slow = await slowExport(ctx, big);
    // The snapshot is read to a spool before the first byte: nothing is checked out for this export
    // while its client sits on the rest of the document.
    await poll(
      async () => ({ idleTx: await inTransaction(ctx), checkedOut: pool.totalCount - pool.idleCount }),
      (s) => s.idleTx === 0,
      10_000,
      200,
    );
    expect(slow.ended()).toBe(false);
    expect(await inTransaction(ctx)).toBe(0);
    const chunks: Buffer[] = [slow.first];
    slow.res.on('data', (c: Buffer) => chunks.push(c));
    const done = new Promise<void>((resolve) => slow.res.once('end', resolve));
    slow.res.resume();
    await done;
    const text = Buffer.concat(chunks).toString('utf8');
    const doc = JSON.parse(text);
    expect(doc.messages).toHaveLength(6001);
    expect(Number(slow.res.headers['content-length'])).toBe(Buffer.byteLength(text, 'utf8'));
  }, 120_000);

  it(`${SLOW_EXPORTS} paused exports do not starve another user's recall`, async () => {
    const slow = await Promise.all(Array.from({ length: SLOW_EXPORTS }, () => slowExport(ctx, big)));
    try {
      expect(slow.every((s) => !s.ended())).toBe(true);
      const started = Date.now();
      const recall = await ctx.call('POST', `/v1/users/${ctx.prefix}-other/recall`, { query: 'what do I like?' });
      expect(recall.status, JSON.stringify(recall.body)).toBe(200);
      // The pool's connection timeout is 5 s: a recall that waited for a pinned pool would fail at it.
      expect(Date.now() - started).toBeLessThan(4500);
      expect(await inTransaction(ctx)).toBe(0);
    } finally {
      for (const s of slow) s.close();
    }
  }, 180_000);
});

describe('exports: concurrency per tenant, budget by cost, snapshot limits', () => {
  let small: TestContext;
  beforeAll(async () => {
    small = await createTestContext({ EXPORT_CONCURRENCY_PER_TENANT: '1', RATE_LIMIT_EXPORT_UNITS_PER_USER: '15', RATE_LIMIT_WINDOW_SECONDS: '600' });
    await small.call('POST', `/v1/users/${big}/conversations/c1/messages`, { id: 'm0', role: 'user', content: 'hello' });
    await small.runtime.pool.query(
      `INSERT INTO messages (user_id, conversation_id, message_id, role, content, said_at)
       SELECT $1, 'c1', 'bulk-' || i, 'user', repeat('y', 3000) || i, now() - (i || ' seconds')::interval FROM generate_series(1, 4000) i`,
      [small.userKey(big)],
    );
  }, 120_000);
  afterAll(async () => {
    await small?.close();
  });

  it('refuses a second export of the tenant while one is open (429 concurrency_limited + Retry-After); other tenants and a closed download free it', async () => {
    const first = await slowExport(small, big);
    try {
      const res = await fetch(`${small.baseUrl}/v1/users/${small.prefix}-x/export`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const body = (await res.json()) as { error: { code: string; details: Record<string, unknown> } };
      expect(body.error).toMatchObject({ code: 'concurrency_limited', details: { resource: 'exports', scope: 'for this tenant', limit: 1 } });
      const other = await fetch(`${small.baseUrl}/v1/users/${small.prefix}-x/export`, { headers: { authorization: `Bearer ${OTHER_TENANT_KEY}` } });
      // Tenant B's own slot (its user does not exist: 404, after the slot was taken and given back).
      expect(other.status).toBe(404);
    } finally {
      first.close();
    }
    const again = await poll(
      () => small.call('GET', `/v1/users/${small.prefix}-x/export`),
      (r) => r.status !== 429,
      10_000,
      100,
    );
    expect(again.status).toBe(404);
  }, 120_000);

  it('charges the export budget by the pages read, not one unit per export', async () => {
    const u = `${small.prefix}-budget`;
    expect((await small.call('POST', `/v1/users/${u}/conversations/c1/messages`, { id: 'm0', role: 'user', content: 'hello' })).status).toBe(202);
    // The tenant's one export slot is freed as the previous download's stream closes, a moment after its last byte.
    const get = async () => {
      for (;;) {
        const res = await fetch(`${small.baseUrl}/v1/users/${u}/export`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
        if (res.status !== 429 || ((await res.clone().json()) as { error: { code: string } }).error.code !== 'concurrency_limited') return res;
        await res.text();
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // A page per section (ten or more) each time, against 15 units: the second export still starts, the third does not.
    for (let i = 0; i < 2; i++) {
      const ok = await get();
      expect(ok.status).toBe(200);
      await ok.text();
    }
    const second = await get();
    expect(second.status).toBe(429);
    const body = (await second.json()) as { error: { code: string; details: Record<string, unknown> } };
    expect(body.error).toMatchObject({ code: 'rate_limited', details: { budget: 'exports', scope: 'user' } });
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('sets the statement and idle limits inside the snapshot only: a snapshot left idle past its limit is dropped, the pool recovers', async () => {
    const source = small.runtime.deps.exports;
    const snapshot = await source.openSnapshot({ statementTimeoutMs: 5000, idleTimeoutMs: 300 });
    await new Promise((r) => setTimeout(r, 1200));
    await expect(snapshot.page({ section: 'messages', userKey: small.userKey(big), after: null, limit: 10 })).rejects.toThrow();
    await snapshot.close({ completed: false });
    const { rows } = await small.runtime.pool.query<{ s: string; i: string }>(`SELECT current_setting('statement_timeout') AS s, current_setting('idle_in_transaction_session_timeout') AS i`);
    expect(rows[0]).toEqual({ s: '0', i: '0' });
  }, 60_000);
});

describe('event streams', () => {
  const url = (userId: string) => `${ctx.baseUrl}/v1/users/${userId}/events`;
  const refused = async (userId: string) => fetch(url(userId), { headers: { authorization: `Bearer ${TEST_KEY}`, accept: 'text/event-stream' } });

  it('caps open streams per user (429 concurrency_limited + Retry-After) and frees a slot when a stream closes', async () => {
    const u = `${ctx.prefix}-sse1`;
    const streams: SseStream[] = [await openSse(url(u), TEST_KEY), await openSse(url(u), TEST_KEY)];
    try {
      const third = await refused(u);
      expect(third.status).toBe(429);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(((await third.json()) as { error: unknown }).error).toMatchObject({ code: 'concurrency_limited', details: { resource: 'event streams', scope: 'for this user', limit: 2 } });
      streams.shift()!.close();
      const reopened = await poll(
        async () => {
          try {
            return await openSse(url(u), TEST_KEY);
          } catch {
            return undefined;
          }
        },
        (s) => s !== undefined,
        10_000,
        100,
      );
      streams.push(reopened!);
    } finally {
      for (const s of streams) s.close();
    }
  }, 60_000);

  it('caps open streams per API key over all its users; another key is unaffected', async () => {
    const streams: SseStream[] = [];
    try {
      await poll(
        async () => {
          try {
            streams.push(await openSse(url(`${ctx.prefix}-sse-k${streams.length}`), TEST_KEY));
          } catch {
            // the slots of the test above may still be closing
          }
          return streams.length;
        },
        (n) => n >= 4,
        10_000,
        100,
      );
      const fifth = await refused(`${ctx.prefix}-sse-k9`);
      expect(fifth.status).toBe(429);
      expect(((await fifth.json()) as { error: unknown }).error).toMatchObject({ code: 'concurrency_limited', details: { scope: 'for this API key', limit: 4 } });
      const b = await openSse(url(`${ctx.prefix}-sse-k9`), OTHER_TENANT_KEY);
      b.close();
    } finally {
      for (const s of streams) s.close();
    }
  }, 60_000);
});

describe('proxy policy, cost and upstream errors', () => {
  let n = 0;
  const post = (body: unknown, opts: { key?: string; user?: string } = {}) =>
    fetch(`${ctx.baseUrl}/proxy/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${opts.key ?? TEST_KEY}`, 'x-memory-user': opts.user ?? `${ctx.prefix}-px${n++}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const messages = [{ role: 'user', content: 'hello there' }];
  const json = async (res: Response) => (await res.json()) as { error: { code: string; message: string; details: any } };

  it('refuses unknown fields, other models, n and token limits past the policy, tools, bad JSON and wrong types, naming the field, before anything goes upstream', async () => {
    const before = upstream.requests.length;
    const cases: [unknown, number, string, string?][] = [
      [{ model: 'gpt-test', messages, store: true }, 400, 'field_not_allowed', 'store'],
      [{ model: 'gpt-test', messages, some_vendor_flag: 1 }, 400, 'field_not_allowed', 'some_vendor_flag'],
      [{ model: 'gpt-4-expensive', messages }, 400, 'field_not_allowed', 'model'],
      [{ model: 'gpt-test', messages, n: 3 }, 400, 'field_not_allowed', 'n'],
      [{ model: 'gpt-test', messages, n: '2' }, 400, 'field_not_allowed', 'n'],
      [{ model: 'gpt-test', messages, max_tokens: 4096 }, 400, 'field_not_allowed', 'max_tokens'],
      [{ model: 'gpt-test', messages, max_completion_tokens: 2049 }, 400, 'field_not_allowed', 'max_completion_tokens'],
      [{ model: 'gpt-test', messages, max_tokens: 1.5 }, 400, 'field_not_allowed', 'max_tokens'],
      [{ model: 'gpt-test', messages, tools: [{ type: 'function', function: { name: 'x', parameters: {} } }] }, 400, 'field_not_allowed', 'tools'],
      [{ model: 'gpt-test', messages, tool_choice: 'auto' }, 400, 'field_not_allowed', 'tool_choice'],
      ['{"model": "gpt-test", "messages": [', 400, 'malformed_json'],
      [{ model: 7, messages }, 400, 'validation_failed'],
      [{ model: 'gpt-test', messages: 'hi' }, 400, 'validation_failed'],
      [{ model: 'gpt-test', messages, stream: 'yes' }, 400, 'validation_failed'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await post(body);
      const err = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(err.error.code, JSON.stringify(body)).toBe(code);
      if (field) {
        expect(err.error.details.field).toBe(field);
        expect(err.error.message).toContain(field);
      }
    }
    expect(upstream.requests.length).toBe(before);
  });

  it("lets a tenant's own policy pass tools and any model; sends the policy's token cap when the caller names none", async () => {
    const ok = await post({ model: 'any-model', messages, tools: [{ type: 'function', function: { name: 'x', parameters: {} } }], tool_choice: 'auto' }, { key: OTHER_TENANT_KEY });
    expect(ok.status).toBe(200);
    expect(upstream.last().body).toMatchObject({ model: 'any-model', tool_choice: 'auto', max_tokens: 2048 });
    const capped = await post({ model: 'gpt-test', messages, max_tokens: 100 });
    expect(capped.status).toBe(200);
    expect(upstream.last().body.max_tokens).toBe(100);
  });

  it('charges the llm budget by cost (n × max tokens), not one unit per call', async () => {
    const user = `${ctx.prefix}-cost`;
    // 2 choices × 2048 tokens = 4 units of 1024 against 10 per user: two calls, not ten.
    const heavy = { model: 'gpt-test', messages, n: 2, max_tokens: 2048 };
    expect((await post(heavy, { user })).status).toBe(200);
    expect((await post(heavy, { user })).status).toBe(200);
    const third = await post(heavy, { user });
    expect(third.status).toBe(429);
    expect((await json(third)).error).toMatchObject({ code: 'rate_limited', details: { budget: 'llm', scope: 'user' } });
  });

  it('maps upstream 429, 5xx, 4xx and a timeout to its own errors: no upstream body, header or key', async () => {
    const expectOwn = async (res: Response, status: number, code: string) => {
      const text = await res.text();
      expect(res.status, text).toBe(status);
      expect(JSON.parse(text).error.code).toBe(code);
      for (const leak of [UPSTREAM_KEY, 'org-operator', '10.0.0.7', 'does not exist', 'Rate limit reached']) expect(text).not.toContain(leak);
      for (const header of ['x-ratelimit-remaining-requests', 'openai-organization', 'x-upstream-secret', 'x-request-id']) expect(res.headers.get(header)).toBeNull();
      return res;
    };
    const busy = await expectOwn(await post({ model: 'upstream-429', messages }), 503, 'upstream_unavailable');
    expect(busy.headers.get('retry-after')).toBe('7');
    await expectOwn(await post({ model: 'upstream-500', messages }), 502, 'upstream_failed');
    await expectOwn(await post({ model: 'upstream-500', messages, stream: true }), 502, 'upstream_failed');
    await expectOwn(await post({ model: 'upstream-error', messages }), 502, 'upstream_failed');
    const started = Date.now();
    await expectOwn(await post({ model: 'upstream-slow', messages }), 504, 'dependencyTimeout');
    expect(Date.now() - started).toBeLessThan(1500 + 3000 + 3000);
  }, 60_000);
});
