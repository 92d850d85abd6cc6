import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, OTHER_TENANT_KEY, TEST_KEY, type TestContext } from './support/harness';

/**
 * The whole HTTP surface against an attacker: every route of the OpenAPI document, under every
 * spelling of its path a router or a proxy might read differently, with no key, a wrong key and
 * another tenant's key. Requests go over a raw socket so no client library normalises the target
 * first (fetch would resolve dot segments and re-encode before the server ever saw them).
 */

const MARKERS = ['ZEBRAMARKER7731', '斑马标记七七三一'];
let ctx: TestContext;
let victim: string;
let memoryId: string;
let reminderId: string;
/** A user key of another user of the victim's tenant: the attacker holds a device config of their own. */
let attackerKey: string;
/** The victim's own user key, and the ids of the rows it may touch (its own, so the victim's stay intact). */
let owner: { userId: string; key: string; keyId: string; memoryId: string; reminderId: string };
const tally = new Map<string, { tried: number; through: number }>();

interface RawResponse {
  status: number;
  body: string;
}

function raw(method: string, target: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  const url = new URL(ctx.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    };
    // An event stream never ends by itself: what it sent in its first seconds is the answer.
    socket.setTimeout(3_000, finish);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) => {
      // A server that resets a malformed request has refused it: that is an answer, not a failure.
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') finish();
      else if (!done) reject(err);
    });
    socket.on('end', finish);
    const lines = [`${method} ${target} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
  });
}

/** Spellings of one path that a lax or differently-decoding router could route to it. */
export function pathVariants(path: string, host: string): Record<string, string> {
  const [, first, ...rest] = path.split('/');
  const tail = rest.join('/');
  const encodeAll = (s: string) => [...s].map((ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  return {
    plain: path,
    'first char encoded': `/%${first!.charCodeAt(0).toString(16)}${first!.slice(1)}/${tail}`,
    'last char of prefix encoded': `/${first!.slice(0, -1)}%${first!.charCodeAt(first!.length - 1).toString(16)}/${tail}`,
    'prefix fully encoded': `/${encodeAll(first!)}/${tail}`,
    'lower-case hex': `/%${first!.charCodeAt(0).toString(16).toLowerCase()}${first!.slice(1)}/${tail}`,
    'upper-case prefix': `/${first!.toUpperCase()}/${tail}`,
    'doubled leading slash': `//${first}/${tail}`,
    'doubled inner slash': `/${first}//${tail}`,
    'dot segment': `/./${first}/${tail}`,
    'dot-dot segment': `/x/../${first}/${tail}`,
    'encoded dot-dot': `/x/%2e%2e/${first}/${tail}`,
    'encoded slash': `/${first}%2F${tail}`,
    'backslash': `/${first}\\${tail}`,
    'trailing slash': `${path}/`,
    'semicolon parameter': `/${first};x=1/${tail}`,
    'query that looks public': `${path}?/healthz`,
    'fragment': `${path}#/healthz`,
    'absolute form': `http://${host}${path}`,
    'absolute form, encoded': `http://${host}/%${first!.charCodeAt(0).toString(16)}${first!.slice(1)}/${tail}`,
    'absolute form, other host': `http://evil.example${path}`,
    'percent-encoded user id': path.replace(victim, encodeAll(victim)),
  };
}

const BAD_AUTH: Record<string, Record<string, string>> = {
  'no header': {},
  'empty bearer': { Authorization: 'Bearer ' },
  'wrong key': { Authorization: 'Bearer not-the-key-0123456789' },
  'key prefix': { Authorization: `Bearer ${TEST_KEY.slice(0, -1)}` },
  'key with suffix': { Authorization: `Bearer ${TEST_KEY}x` },
  'basic scheme': { Authorization: `Basic ${Buffer.from(`x:${TEST_KEY}`).toString('base64')}` },
  'key in another header': { 'X-Api-Key': TEST_KEY },
  'two keys in one header': { Authorization: `Bearer ${TEST_KEY} Bearer ${TEST_KEY}` },
};

function bodyFor(method: string, path: string): string | undefined {
  if (method === 'GET' || method === 'HEAD' || method === 'DELETE') return undefined;
  if (path.endsWith('/recall') || path.endsWith('/search')) return JSON.stringify({ query: 'allergy' });
  if (path.endsWith('/messages')) return JSON.stringify({ id: 'm-attack', role: 'user', content: 'forget everything' });
  if (path.endsWith('/memories')) return JSON.stringify({ text: 'I am the attacker', type: 'fact' });
  if (path.endsWith('/reminders')) return JSON.stringify({ text: 'attack', dueAt: new Date(Date.now() + 86_400_000).toISOString() });
  if (path.endsWith('/snooze')) return JSON.stringify({ seconds: 600 });
  return '{}';
}

function concrete(path: string, ids = { userId: victim, memoryId, reminderId, keyId: '00000000-0000-4000-8000-000000000000' }): string {
  return path
    .replace('{userId}', ids.userId)
    .replace('{conversationId}', 'c1')
    .replace('{keyId}', ids.keyId)
    .replace('{id}', path.includes('/reminders/') ? ids.reminderId : ids.memoryId);
}

/** Routes only the tenant key reaches (docs/security.md): a user key gets 403 there even for its own user. */
const TENANT_ONLY = new Set(['POST /v1/users/{userId}/keys', 'GET /v1/users/{userId}/keys', 'DELETE /v1/users/{userId}/keys/{keyId}', 'DELETE /v1/users/{userId}', 'POST /v1/users/{userId}/page-token']);

async function openApiRoutes(): Promise<{ method: string; path: string }[]> {
  const doc = await ctx.call('GET', '/openapi.json', undefined, { authorization: '' });
  return Object.entries(doc.body.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: p })));
}

function count(kind: string, through: boolean): void {
  const t = tally.get(kind) ?? { tried: 0, through: 0 };
  t.tried++;
  if (through) t.through++;
  tally.set(kind, t);
}

// Ids count only when the attacker did not send them: an error that names the id it was asked
// for tells nothing new.
const leaks = (body: string, sent = '') =>
  MARKERS.some((m) => body.includes(m)) || [memoryId, reminderId].some((id) => body.includes(id) && !sent.includes(id));

beforeAll(async () => {
  ctx = await createTestContext();
  victim = `${ctx.prefix}-victim`;
  const created = await ctx.call('POST', `/v1/users/${victim}/memories`, { text: `I am allergic to peanuts ${MARKERS[0]}`, type: 'fact' });
  expect(created.status).toBe(201);
  memoryId = created.body.memory.id;
  const said = await ctx.call('POST', `/v1/users/${victim}/conversations/c1/messages`, { id: 'm1', role: 'user', content: `我对花生过敏 ${MARKERS[1]}` });
  expect(said.status).toBe(202);
  const reminder = await ctx.call('POST', `/v1/users/${victim}/reminders`, { text: `call the doctor ${MARKERS[0]}`, dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString() });
  expect(reminder.status).toBe(201);
  reminderId = reminder.body.id;

  const attacker = await ctx.call('POST', `/v1/users/${ctx.prefix}-attacker/keys`, { label: 'attacker device' });
  expect(attacker.status).toBe(201);
  attackerKey = attacker.body.secret;
  const ownerId = `${ctx.prefix}-owner`;
  const ownMemory = await ctx.call('POST', `/v1/users/${ownerId}/memories`, { text: 'I like my own tea', type: 'preference' });
  const ownReminder = await ctx.call('POST', `/v1/users/${ownerId}/reminders`, { text: 'water the plants', dueAt: new Date(Date.now() + 7 * 86_400_000).toISOString() });
  const ownKey = await ctx.call('POST', `/v1/users/${ownerId}/keys`, { label: 'owner device' });
  expect([ownMemory.status, ownReminder.status, ownKey.status]).toEqual([201, 201, 201]);
  owner = { userId: ownerId, key: ownKey.body.secret, keyId: ownKey.body.key.id, memoryId: ownMemory.body.memory.id, reminderId: ownReminder.body.id };
});

afterAll(async () => {
  await ctx?.close();
  if (tally.size > 0) {
    console.log('attack tally (kind: tried / got through):');
    for (const [kind, t] of [...tally].sort()) console.log(`  ${kind}: ${t.tried} / ${t.through}`);
  }
});

describe('auth over the whole surface', () => {
  it('answers no route of the OpenAPI document with data, under any spelling, without a valid key', async () => {
    const doc = await ctx.call('GET', '/openapi.json', undefined, { authorization: '' });
    expect(doc.status).toBe(200);
    const routes = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: p })),
    );
    const userRoutes = routes.filter((r) => r.path.startsWith('/v1/'));
    expect(userRoutes.length).toBeGreaterThan(20);
    const host = new URL(ctx.baseUrl).host;
    const failures: string[] = [];
    for (const route of userRoutes) {
      const path = concrete(route.path);
      for (const [variant, target] of Object.entries(pathVariants(path, host))) {
        for (const [auth, headers] of Object.entries(BAD_AUTH)) {
          const res = await raw(route.method, target, headers, bodyFor(route.method, route.path));
          const through = (res.status >= 200 && res.status < 300) || leaks(res.body, target);
          count(`request target: ${variant}`, through);
          count(`credential: ${auth}`, through);
          if (through) failures.push(`${route.method} ${target} [${auth}] -> ${res.status} ${res.body.slice(0, 120)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("lets another tenant's key reach only that tenant's own user of the same id", async () => {
    const doc = await ctx.call('GET', '/openapi.json', undefined, { authorization: '' });
    const routes = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: p })),
    );
    const failures: string[] = [];
    for (const route of routes.filter((r) => r.path.startsWith('/v1/users/'))) {
      const path = concrete(route.path);
      const res = await raw(route.method, path, { Authorization: `Bearer ${OTHER_TENANT_KEY}` }, bodyFor(route.method, route.path));
      const through = leaks(res.body, path);
      count('tenant: other tenant, same user id', through);
      if (through) failures.push(`${route.method} ${path} -> ${res.status} ${res.body.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
    // Nothing another tenant sent changed the victim's data.
    const memory = await ctx.call('GET', `/v1/users/${victim}/memories/${memoryId}`);
    expect(memory.body.memory.status).toBe('active');
    const reminder = await ctx.call('GET', `/v1/users/${victim}/reminders/${reminderId}`);
    expect(reminder.body.status).toBe('scheduled');
  });

  it("answers a user key on every route of another user with 403, under any spelling, and leaks nothing", async () => {
    const routes = await openApiRoutes();
    const userRoutes = routes.filter((r) => r.path.startsWith('/v1/users/{userId}'));
    expect(userRoutes.length).toBeGreaterThan(20);
    const host = new URL(ctx.baseUrl).host;
    const failures: string[] = [];
    for (const route of userRoutes) {
      const path = concrete(route.path);
      for (const [variant, target] of Object.entries(pathVariants(path, host))) {
        const res = await raw(route.method, target, { Authorization: `Bearer ${attackerKey}` }, bodyFor(route.method, route.path));
        // The plain path and every spelling the router reads as it are refused as another user's;
        // the others never reach a route at all (400, 404). None answers with data.
        const through = (res.status >= 200 && res.status < 300) || leaks(res.body, target) || (variant === 'plain' && res.status !== 403);
        count(`user key of another user: ${variant}`, through);
        if (through) failures.push(`${route.method} ${target} -> ${res.status} ${res.body.slice(0, 120)}`);
      }
    }
    // The header-named entry points: the proxy (in the document) and MCP (hidden from it).
    for (const [target, body] of [
      ['/proxy/v1/chat/completions', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'what am I allergic to?' }] })],
      ['/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'memory_search', arguments: { query: 'allergic' } } })],
    ] as const) {
      const res = await raw('POST', target, { Authorization: `Bearer ${attackerKey}`, 'X-Memory-User': victim, Accept: 'application/json, text/event-stream' }, body);
      const through = res.status !== 403 || leaks(res.body);
      count('user key of another user: X-Memory-User', through);
      if (through) failures.push(`POST ${target} [X-Memory-User: victim] -> ${res.status} ${res.body.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
    const memory = await ctx.call('GET', `/v1/users/${victim}/memories/${memoryId}`);
    expect(memory.body.memory.status).toBe('active');
  });

  it('keeps a user key off the tenant-only routes of its own user, and lets it reach every other route of its own user', async () => {
    const routes = (await openApiRoutes()).filter((r) => r.path.startsWith('/v1/users/{userId}'));
    const documented = new Set(routes.map((r) => `${r.method} ${r.path}`));
    for (const route of TENANT_ONLY) expect(documented, route).toContain(route);
    const failures: string[] = [];
    // Tenant-only first: the purge among them must not run before the walk over the others.
    const ordered = [...routes].sort((a, b) => Number(TENANT_ONLY.has(`${b.method} ${b.path}`)) - Number(TENANT_ONLY.has(`${a.method} ${a.path}`)));
    for (const route of ordered) {
      const path = concrete(route.path, owner);
      const res = await raw(route.method, path, { Authorization: `Bearer ${owner.key}` }, bodyFor(route.method, route.path));
      const tenantOnly = TENANT_ONLY.has(`${route.method} ${route.path}`);
      const wrong = tenantOnly ? res.status !== 403 || !res.body.includes('tenant_only') : res.status === 401 || res.status === 403;
      count(tenantOnly ? 'user key, own user: tenant-only route' : 'user key, own user: refused on its own route', wrong);
      if (wrong) failures.push(`${route.method} ${path} -> ${res.status} ${res.body.slice(0, 160)}`);
    }
    expect(failures).toEqual([]);
    // The key was neither revoked nor its user purged by anything it sent.
    expect((await ctx.call('GET', `/v1/users/${owner.userId}/keys`)).body.keys.map((k: { id: string }) => k.id)).toContain(owner.keyId);
  });

  it('keeps the same user id under two tenants as two people', async () => {
    const shared = `${ctx.prefix}-shared`;
    await ctx.call('POST', `/v1/users/${shared}/memories`, { text: 'Tenant A user likes green tea', type: 'preference' });
    await ctx.call('POST', `/v1/users/${shared}/memories`, { text: 'Tenant B user likes black coffee', type: 'preference' }, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    const a = await ctx.call('GET', `/v1/users/${shared}/memories`);
    const b = await ctx.call('GET', `/v1/users/${shared}/memories`, undefined, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    expect(a.body.memories.map((m: { text: string }) => m.text)).toEqual(['Tenant A user likes green tea']);
    expect(b.body.memories.map((m: { text: string }) => m.text)).toEqual(['Tenant B user likes black coffee']);
    const whoA = await ctx.call('GET', `/v1/users/${shared}`);
    const whoB = await ctx.call('GET', `/v1/users/${shared}`, undefined, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    expect(whoA.body.userKey).not.toEqual(whoB.body.userKey);
    expect(whoA.body.userKey.startsWith('tenant-a:')).toBe(true);
    // The user's own id never reaches Temporal: workflow ids and search attributes carry the key.
    expect(whoA.body.userKey).not.toContain(shared);
  });

  it('gives (user, conversation) pairs that share a spelling when joined distinct workflows', async () => {
    const u = `${ctx.prefix}-a`;
    const first = await ctx.call('POST', `/v1/users/${u}/conversations/b.c/messages`, { id: 'x', role: 'user', content: 'hello' });
    const second = await ctx.call('POST', `/v1/users/${u}.b/conversations/c/messages`, { id: 'x', role: 'user', content: 'hello' });
    const third = await ctx.call('POST', `/v1/users/${u}/conversations/b.c/messages`, { id: 'x', role: 'user', content: 'hello' }, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    const ids = [first, second, third].map((r) => r.body.workflowId as string);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) {
      expect(id).not.toContain(u);
      expect(id).not.toContain('b.c');
    }
    count('workflow id collision', new Set(ids).size !== 3);
  });

  it('refuses an unmatched path without a key as it refuses a real one, so probing learns nothing', async () => {
    for (const target of ['/v1/users/x/nope', '/v2/users/x/memories', '/admin', '/v1/']) {
      const res = await raw('GET', target, {});
      expect(res.status, target).toBe(401);
      count('unmatched path probe', res.status !== 401);
    }
  });
});
