import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isWorkflowPending, MemoryClient, memoryMcpEndpoint, memoryProxyOptions, type WorkflowPending } from '../src/client/index';
import { MAX_KEYS_PER_USER } from '../src/account/user-keys';
import { FakeOpenAI } from './support/fake-openai';
import { createTestContext, OTHER_TENANT_KEY, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';

/**
 * Per-user API keys (issue #20) on the real stack: minted, listed and revoked with the tenant key;
 * used over HTTP, MCP and the proxy for their own user only; refused (401) once revoked, expired
 * or purged; and every request form of the new routes.
 */

/** Recall budget per user in this file: the rate-limit test spends it across both kinds of key. */
const RECALL_PER_USER = 6;

/** A stored memory's answer; a 202 here means the test's worker is not running, which is a setup failure. */
function stored<T extends object>(answer: T | WorkflowPending): T {
  if (isWorkflowPending(answer)) throw new Error(`the memory is still pending (${answer.workflowId})`);
  return answer;
}
const upstream = new FakeOpenAI();
let ctx: TestContext;
let tenant: MemoryClient;
let alice: string;
let bob: string;
let aliceMemory: string;
let bobMemory: string;
const clients: Client[] = [];

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function mint(userId: string, body: unknown = {}): Promise<{ id: string; secret: string }> {
  const res = await ctx.call('POST', `/v1/users/${userId}/keys`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.key.id, secret: res.body.secret };
}

beforeAll(async () => {
  await upstream.start();
  // A recall bound that holds on a loaded machine: the test is about who the key reaches, not latency.
  ctx = await createTestContext({ UPSTREAM_BASE_URL: upstream.baseUrl, RATE_LIMIT_RECALL_PER_USER: String(RECALL_PER_USER), PROXY_RECALL_TIMEOUT_MS: '10000' });
  tenant = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
  alice = `${ctx.prefix}-alice`;
  bob = `${ctx.prefix}-bob`;
  aliceMemory = stored(await tenant.createMemory(alice, { text: 'I am allergic to peanuts', type: 'fact', importance: 0.9 })).memory.id;
  bobMemory = stored(await tenant.createMemory(bob, { text: 'Bob keeps his PIN under the keyboard', type: 'fact' })).memory.id;
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ctx?.close();
  await upstream.stop();
});

describe('minting, listing and revoking', () => {
  it('mints a jmu_ key shown once, lists it without secret or digest, and records its last use', async () => {
    const res = await ctx.call('POST', `/v1/users/${alice}/keys`, { label: "Claude Desktop on Alice's laptop" });
    expect(res.status).toBe(201);
    expect(res.body.secret).toMatch(/^jmu_[0-9a-f]{32}_[\w-]{43}$/);
    expect(res.body.key).toMatchObject({ label: "Claude Desktop on Alice's laptop", expiresAt: null, lastUsedAt: null });
    const secret = res.body.secret as string;

    const used = await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(secret));
    expect(used.status).toBe(200);
    expect(used.body.memories.map((m: { id: string }) => m.id)).toEqual([aliceMemory]);

    const listed = await ctx.call('GET', `/v1/users/${alice}/keys`);
    expect(listed.status).toBe(200);
    const mine = listed.body.keys.find((k: { id: string }) => k.id === res.body.key.id);
    expect(mine.lastUsedAt).not.toBeNull();
    expect(Object.keys(mine).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'label', 'lastUsedAt']);
    // Neither the secret nor any part of it is ever read back.
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(-43));
    const { rows } = await ctx.runtime.pool.query<{ secret_hash: Buffer }>('SELECT secret_hash FROM user_api_keys WHERE key_id = $1', [res.body.key.id]);
    expect(rows[0]!.secret_hash).toHaveLength(32);
    expect(rows[0]!.secret_hash.toString('latin1')).not.toContain(secret.slice(-43));
  });

  it('mints without a body, and through the client package', async () => {
    const bare = await fetch(`${ctx.baseUrl}/v1/users/${alice}/keys`, { method: 'POST', headers: bearer(TEST_KEY) });
    expect(bare.status, await bare.clone().text()).toBe(201);
    const minted = await tenant.createUserKey(alice, { label: 'phone' });
    expect(minted.secret.startsWith('jmu_')).toBe(true);
    expect((await tenant.listUserKeys(alice)).map((k) => k.id)).toContain(minted.key.id);
    await tenant.revokeUserKey(alice, minted.key.id);
    expect((await tenant.listUserKeys(alice)).map((k) => k.id)).not.toContain(minted.key.id);
    await expect(tenant.revokeUserKey(alice, minted.key.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('revokes at once (401 on the next request), and a second revoke is 404', async () => {
    const key = await mint(alice);
    expect((await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(key.secret))).status).toBe(200);
    expect((await ctx.call('DELETE', `/v1/users/${alice}/keys/${key.id}`)).status).toBe(204);
    const after = await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(key.secret));
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
    const again = await ctx.call('DELETE', `/v1/users/${alice}/keys/${key.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
  });

  it("scopes keys by user and tenant: nobody lists or revokes another user's key", async () => {
    const key = await mint(alice);
    // Through bob's path the id is not bob's: 404, and alice's key still works.
    expect((await ctx.call('DELETE', `/v1/users/${bob}/keys/${key.id}`)).status).toBe(404);
    expect((await ctx.call('GET', `/v1/users/${bob}/keys`)).body.keys.map((k: { id: string }) => k.id)).not.toContain(key.id);
    // Tenant B's user of the same id is another person with no keys.
    const other = await ctx.call('GET', `/v1/users/${alice}/keys`, undefined, bearer(OTHER_TENANT_KEY));
    expect(other.status).toBe(200);
    expect(other.body.keys).toEqual([]);
    expect((await ctx.call('DELETE', `/v1/users/${alice}/keys/${key.id}`, undefined, bearer(OTHER_TENANT_KEY))).status).toBe(404);
    expect((await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(key.secret))).status).toBe(200);
  });

  it('expires: 401 with reason "expired" after expiresAt; an expiry in the past is refused', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const key = await mint(alice, { expiresAt: soon, label: 'short-lived' });
    expect((await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(key.secret))).status).toBe(200);
    const expired = await poll(() => ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(key.secret)), (r) => r.status === 401, 10_000);
    expect(expired.status).toBe(401);
    expect(expired.body.error.details.reason).toBe('expired');
    const past = await ctx.call('POST', `/v1/users/${alice}/keys`, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    expect(past.status).toBe(400);
    expect(past.body.error.code).toBe('validation_failed');
  });

  it(`holds at most ${MAX_KEYS_PER_USER} keys per user (409), even minted all at once`, async () => {
    const user = `${ctx.prefix}-many`;
    const answers = await Promise.all(Array.from({ length: MAX_KEYS_PER_USER + 3 }, () => ctx.call('POST', `/v1/users/${user}/keys`, {})));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(MAX_KEYS_PER_USER);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => [a.status, a.body.error.details.reason])).toEqual(Array.from({ length: 3 }, () => [409, 'too_many_keys']));
    expect((await ctx.call('GET', `/v1/users/${user}/keys`)).body.keys).toHaveLength(MAX_KEYS_PER_USER);
  });

  it('purging the user revokes their keys (rows deleted)', async () => {
    const user = `${ctx.prefix}-carol`;
    await tenant.createMemory(user, { text: 'Carol likes jazz', type: 'preference' });
    const key = await mint(user);
    expect((await ctx.call('GET', `/v1/users/${user}/memories`, undefined, bearer(key.secret))).status).toBe(200);
    const purged = await ctx.call('DELETE', `/v1/users/${user}?wait=true`);
    expect(purged.status).toBe(200);
    expect(purged.body.result.counts.postgres.user_api_keys).toBe(1);
    expect((await ctx.call('GET', `/v1/users/${user}/memories`, undefined, bearer(key.secret))).status).toBe(401);
    const { rows } = await ctx.runtime.pool.query('SELECT 1 FROM user_api_keys WHERE user_id = $1', [ctx.userKey(user)]);
    expect(rows).toEqual([]);
  });
});

describe('what a user key reaches', () => {
  let key: { id: string; secret: string };
  beforeAll(async () => {
    key = await mint(alice, { label: 'reach' });
  });

  it('reads and writes its own user without any user header', async () => {
    const own = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: key.secret });
    const windowSeats = stored(await own.createMemory(alice, { text: 'I prefer window seats', type: 'preference' }));
    expect((await own.getMemory(alice, windowSeats.memory.id)).memory.text).toBe('I prefer window seats');
    const recalled = await own.recall(alice, { query: 'peanuts' });
    expect(recalled.memories.map((m) => m.id)).toContain(aliceMemory);
    // Its own export: the right of access is the user's (docs/security.md).
    const exported = await own.exportUser(alice);
    expect(exported.memories.length).toBeGreaterThan(0);
  });

  it("answers 403 other_user for another user's routes, and touches nothing there", async () => {
    for (const [method, path, body] of [
      ['GET', `/v1/users/${bob}/memories`, undefined],
      ['GET', `/v1/users/${bob}/memories/${bobMemory}`, undefined],
      ['POST', `/v1/users/${bob}/recall`, { query: 'PIN' }],
      ['GET', `/v1/users/${bob}/export`, undefined],
      ['DELETE', `/v1/users/${bob}/memories/${bobMemory}`, undefined],
      ['POST', `/v1/users/${bob}/memories`, { text: 'planted', type: 'fact' }],
      // Bob's id percent-encoded is still bob once the router has decoded it.
      ['GET', `/v1/users/${encodeURIComponent(bob).replace('-', '%2D')}/memories`, undefined],
    ] as const) {
      const res = await ctx.call(method, path, body, bearer(key.secret));
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'other_user' } });
      expect(JSON.stringify(res.body)).not.toContain('PIN');
    }
    expect((await tenant.getMemory(bob, bobMemory)).memory.status).toBe('active');
    expect((await tenant.listMemories(bob)).memories).toHaveLength(1);
  });

  it('answers 403 tenant_only on key management and purge, even for its own user', async () => {
    for (const [method, path, body] of [
      ['POST', `/v1/users/${alice}/keys`, {}],
      ['GET', `/v1/users/${alice}/keys`, undefined],
      ['DELETE', `/v1/users/${alice}/keys/${key.id}`, undefined],
      ['DELETE', `/v1/users/${alice}`, undefined],
      ['DELETE', `/v1/users/${alice}?wait=true`, undefined],
      // A page session is signed, not stored: minted with a user key it would outlive the key.
      ['POST', `/v1/users/${alice}/page-token`, undefined],
    ] as const) {
      const res = await ctx.call(method, path, body, bearer(key.secret));
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'tenant_only' } });
    }
    // Nothing was purged or revoked.
    expect((await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(key.secret))).status).toBe(200);
  });

  it('refuses malformed, tampered and foreign-looking tokens with 401', async () => {
    const flipped = key.secret.slice(0, -1) + (key.secret.endsWith('A') ? 'B' : 'A');
    const otherId = `jmu_${'0'.repeat(32)}_${key.secret.slice(-43)}`;
    for (const token of [flipped, otherId, 'jmu_', `${key.secret}x`, key.secret.toUpperCase(), key.secret.replace('jmu_', 'jmx_')]) {
      const res = await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(token));
      expect(res.status, token).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });

  it('counts its requests in the same per-user budget as the tenant key', async () => {
    const user = `${ctx.prefix}-dora`;
    const own = await mint(user);
    const statuses: number[] = [];
    for (let i = 0; i < RECALL_PER_USER; i++) {
      const headers = i % 2 === 0 ? bearer(TEST_KEY) : bearer(own.secret);
      statuses.push((await ctx.call('POST', `/v1/users/${user}/recall`, { query: 'anything' }, headers)).status);
    }
    expect(statuses).toEqual(Array.from({ length: RECALL_PER_USER }, () => 200));
    for (const headers of [bearer(own.secret), bearer(TEST_KEY)]) {
      const refused = await ctx.call('POST', `/v1/users/${user}/recall`, { query: 'anything' }, headers);
      expect(refused.status).toBe(429);
      expect(refused.body.error.details).toMatchObject({ budget: 'recall', scope: 'user' });
    }
  });
});

describe('request forms of the key routes', () => {
  const post = (path: string, body: string, contentType = 'application/json') =>
    fetch(`${ctx.baseUrl}${path}`, { method: 'POST', headers: { ...bearer(TEST_KEY), 'content-type': contentType }, body });

  it('refuses bad bodies with 4xx and a code, minting nothing', async () => {
    const user = `${ctx.prefix}-forms`;
    const path = `/v1/users/${user}/keys`;
    const cases: [string, Response, number, string][] = [
      ['bad JSON', await post(path, '{"label": '), 400, 'malformed_json'],
      // Read as a string, which is no object: refused by the schema, as on every JSON route.
      ['wrong content type', await post(path, '{}', 'text/plain'), 400, 'validation_failed'],
      ['unknown content type', await post(path, '{}', 'application/x-www-form-urlencoded'), 415, 'validation_failed'],
      ['unknown field', await post(path, JSON.stringify({ label: 'x', expires: '2030-01-01T00:00:00Z' })), 400, 'validation_failed'],
      ['huge label', await post(path, JSON.stringify({ label: 'x'.repeat(101) })), 400, 'validation_failed'],
      ['megabyte label', await post(path, JSON.stringify({ label: 'x'.repeat(1_000_000) })), 413, 'payload_too_large'],
      ['control characters', await post(path, JSON.stringify({ label: 'a\u0000b' })), 400, 'validation_failed'],
      ['empty label', await post(path, JSON.stringify({ label: '   ' })), 400, 'validation_failed'],
      ['label not a string', await post(path, JSON.stringify({ label: 7 })), 400, 'validation_failed'],
      ['expiry not a date', await post(path, JSON.stringify({ expiresAt: 'tomorrow' })), 400, 'validation_failed'],
      ['expiry without offset', await post(path, JSON.stringify({ expiresAt: '2030-01-01T00:00:00' })), 400, 'validation_failed'],
      ['array body', await post(path, '[]'), 400, 'validation_failed'],
      ['invalid UTF-8', await fetch(`${ctx.baseUrl}${path}`, { method: 'POST', headers: { ...bearer(TEST_KEY), 'content-type': 'application/json' }, body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]) }), 400, 'validation_failed'],
    ];
    for (const [name, res, status, code] of cases) {
      expect(res.status, name).toBe(status);
      expect((await res.json()).error.code, name).toBe(code);
    }
    const { rows } = await ctx.runtime.pool.query('SELECT 1 FROM user_api_keys WHERE user_id = $1', [ctx.userKey(user)]);
    expect(rows).toEqual([]);
  });

  it('refuses bad user ids and key ids in the path with 400', async () => {
    const key = await mint(alice);
    for (const path of [
      `/v1/users/${encodeURIComponent('bad user')}/keys`,
      `/v1/users/${'a'.repeat(129)}/keys`,
      `/v1/users/-dash/keys`,
      `/v1/users/${alice}/keys/not-a-uuid`,
      `/v1/users/${alice}/keys/${key.id}x`,
      `/v1/users/${alice}/keys/${key.id.toUpperCase()}'--`,
    ]) {
      const method = path.endsWith('/keys') ? 'GET' : 'DELETE';
      const res = await ctx.call(method, path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    // The key survived every one of them.
    expect((await ctx.call('GET', `/v1/users/${alice}/memories`, undefined, bearer(key.secret))).status).toBe(200);
  });

  it('is in the OpenAPI document with its schemas', async () => {
    const doc = (await ctx.call('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/v1/users/{userId}/keys']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/users/{userId}/keys/{keyId}'])).toEqual(['delete']);
    const body = doc.paths['/v1/users/{userId}/keys'].post.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.label.maxLength).toBe(100);
  });
});

describe('MCP with a user key', () => {
  const connect = async (apiKey: string, userId?: string) => {
    const { url, headers } = memoryMcpEndpoint({ baseUrl: ctx.baseUrl, apiKey, userId });
    const client = new Client({ name: 'user-key-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    clients.push(client);
    return client;
  };

  it('serves the tools for its own user without X-Memory-User, and refuses another user and a revoked key', async () => {
    const key = await mint(alice, { label: 'mcp' });
    const client = await connect(key.secret);
    const found = (await client.callTool({ name: 'memory_search', arguments: { query: 'peanut allergy' } })) as unknown as { structuredContent: { memories: { id: string }[] } };
    expect(found.structuredContent.memories.map((m) => m.id)).toContain(aliceMemory);
    // Naming its own user is fine; naming bob is 403 before any tool runs.
    await connect(key.secret, alice);
    await expect(connect(key.secret, bob)).rejects.toThrow(/403|forbidden/i);
    const raw = await fetch(`${ctx.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...bearer(key.secret), 'x-memory-user': bob, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory_search', arguments: { query: 'PIN' } } }),
    });
    expect(raw.status).toBe(403);
    expect((await raw.json()).error.details.reason).toBe('other_user');
    await tenant.revokeUserKey(alice, key.id);
    await expect(connect(key.secret)).rejects.toThrow(/401|unauthorized/i);
  });
});

describe('the proxy with a user key', () => {
  it('recalls and records for its own user without X-Memory-User, and refuses another user', async () => {
    const user = `${ctx.prefix}-pat`;
    await tenant.createMemory(user, { text: 'I am vegetarian', type: 'fact', importance: 0.9 });
    const key = await mint(user, { label: 'chat app' });
    const openai = new OpenAI({ ...memoryProxyOptions({ baseUrl: ctx.baseUrl, apiKey: key.secret, conversationId: 'chat-key' }), maxRetries: 0 });
    const { response } = await openai.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Dinner ideas? I am vegetarian, remember?' }] }).withResponse();
    expect(response.headers.get('x-memory-recall')).toBe('ok');
    expect(JSON.stringify(upstream.last().body.messages)).toContain('I am vegetarian');
    // The memory key never goes upstream.
    expect(JSON.stringify(upstream.last().headers)).not.toContain(key.secret);
    const recorded = await poll(
      async () => (await ctx.runtime.pool.query('SELECT 1 FROM messages WHERE user_id = $1 AND conversation_id = $2', [ctx.userKey(user), 'chat-key'])).rows.length,
      (n) => n === 2,
    );
    expect(recorded).toBe(2);

    const sent = upstream.requests.length;
    const intruder = new OpenAI({ ...memoryProxyOptions({ baseUrl: ctx.baseUrl, apiKey: key.secret, userId: bob }), maxRetries: 0 });
    const refused = await intruder.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'What is my PIN?' }] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect(upstream.requests.length).toBe(sent);
  });
});

describe('tenant keys', () => {
  it('still need X-Memory-User on the proxy and MCP, and still name any user of the tenant', async () => {
    const res = await fetch(`${ctx.baseUrl}/proxy/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(TEST_KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(400);
    expect((await tenant.listMemories(bob)).memories.map((m) => m.id)).toEqual([bobMemory]);
  });
});
