import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENCRYPTED_ENCODING, EncryptionCodec, KEY_ID_METADATA_KEY } from '../src/security/payload-codec';
import { DataKeyDestroyedError, MasterKeyring, PayloadKeyStore } from '../src/security/payload-keys';
import { createTestContext, type TestContext } from './support/harness';

// Encrypted payloads on the real stack, because Temporal keeps histories where this service cannot
// delete them: Temporal keeps only ciphertext of a user's workflows, each
// user's under their own data key; destroying that key (purge) leaves every copy unreadable
// while other users' histories still decode; operators decode through the codec server.

type History = temporal.api.history.v1.IHistory;
const { History: HistoryProto } = temporal.api.history.v1;

let ctx: TestContext;
let raw: Client;
let alice: string;
let bob: string;
let aliceMarker: string;
let bobMarker: string;
const aliceWorkflows: string[] = [];
const bobWorkflows: string[] = [];

const keys = () => ctx.runtime.payloadEncryption!.keys;
const codec = () => ctx.runtime.payloadEncryption!.codec;
const utf8 = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('utf8');

/**
 * Every payload of a history except search attributes, headers and patch markers: Temporal writes
 * those itself, in clear, and they hold ids only (user key, patch names).
 */
function payloadsOf(node: unknown, out: Payload[] = []): Payload[] {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return out;
  if (Array.isArray(node)) {
    for (const item of node) payloadsOf(item, out);
    return out;
  }
  const o = node as Record<string, unknown>;
  const metadata = o.metadata as Record<string, Uint8Array> | undefined;
  if (metadata && typeof metadata === 'object' && metadata.encoding instanceof Uint8Array) {
    out.push(o as Payload);
    return out;
  }
  if ((o.markerRecordedEventAttributes as { markerName?: string } | undefined)?.markerName === 'core_patch') return out;
  for (const [key, value] of Object.entries(o)) if (key !== 'searchAttributes' && key !== 'header') payloadsOf(value, out);
  return out;
}

/** The history exactly as Temporal stores it: fetched by a client that has no codec. */
async function rawHistory(workflowId: string): Promise<History> {
  return raw.workflow.getHandle(workflowId).fetchHistory();
}

async function liveKeyId(userKey: string): Promise<string | undefined> {
  const { rows } = await ctx.runtime.pool.query<{ key_id: string }>(`SELECT key_id FROM user_data_keys WHERE kind = 'user' AND user_id = $1 AND destroyed_at IS NULL`, [userKey]);
  return rows[0]?.key_id;
}

async function codecCall(op: 'encode' | 'decode', payloads: Payload[], headers: Record<string, string>) {
  const body = { payloads: payloads.map((p) => ({ metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])), data: Buffer.from(p.data ?? []).toString('base64') })) };
  return ctx.call('POST', `/codec/${op}`, body, { authorization: '', ...headers });
}

beforeAll(async () => {
  ctx = await createTestContext();
  raw = new Client({ connection: ctx.runtime.temporal.connection, namespace: ctx.runtime.config.temporal.namespace });
  alice = `${ctx.prefix}-alice`;
  bob = `${ctx.prefix}-bob`;
  aliceMarker = `quokka${ctx.prefix}a`;
  bobMarker = `wombat${ctx.prefix}b`;

  // Alice: a conversation, extracted on the end call — client, workflow and activity payloads.
  const messages = [
    { id: 'm1', role: 'user', content: `我对${aliceMarker}过敏，吃了会起疹子。`, at: '2026-06-01T10:00:00+08:00' },
    { id: 'm2', role: 'assistant', content: '好的，我记住了。', at: '2026-06-01T10:00:20+08:00' },
  ];
  const posted = await ctx.call('POST', `/v1/users/${alice}/conversations/c1/messages`, { messages });
  expect(posted.status, JSON.stringify(posted.body)).toBe(202);
  const ended = await ctx.call('POST', `/v1/users/${alice}/conversations/c1/end?wait=true`, {});
  expect(ended.status, JSON.stringify(ended.body)).toBe(200);
  expect(JSON.stringify(ended.body.result.decisions)).toContain(aliceMarker);
  aliceWorkflows.push(posted.body.workflowId, ended.body.workflowId);

  // Bob: a memory through the StoreMemory workflow.
  const stored = await ctx.call('POST', `/v1/users/${bob}/memories`, { text: `我最喜欢的动物是${bobMarker}`, type: 'preference' });
  expect(stored.status, JSON.stringify(stored.body)).toBe(201);
  bobWorkflows.push(stored.body.workflowId);
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

describe('encrypted Temporal payloads', () => {
  it("Temporal holds only ciphertext: no payload byte of the user's histories shows their text", async () => {
    const cases: [string, string][] = [...aliceWorkflows.map((w): [string, string] => [w, aliceMarker]), ...bobWorkflows.map((w): [string, string] => [w, bobMarker])];
    for (const [workflowId, marker] of cases) {
      const history = await rawHistory(workflowId);
      const bytes = Buffer.from(HistoryProto.encode(history).finish());
      expect(bytes.includes(Buffer.from(marker)), `${workflowId} shows ${marker} in clear`).toBe(false);
      const payloads = payloadsOf(history);
      expect(payloads.length, workflowId).toBeGreaterThan(0);
      for (const p of payloads) expect(utf8(p.metadata!.encoding), `${workflowId}: a payload in clear`).toBe(ENCRYPTED_ENCODING);
    }
  });

  it("every payload is under its user's own data key: client, workflow and activity paths alike", async () => {
    const aliceKey = await liveKeyId(ctx.userKey(alice));
    const bobKey = await liveKeyId(ctx.userKey(bob));
    expect(aliceKey).toBeDefined();
    expect(bobKey).toBeDefined();
    expect(aliceKey).not.toBe(bobKey);
    const history = await rawHistory(aliceWorkflows[1]!);
    const byEvent = (type: keyof typeof temporal.api.enums.v1.EventType) =>
      (history.events ?? []).filter((e) => e.eventType === temporal.api.enums.v1.EventType[type]).flatMap((e) => payloadsOf(e));
    // Started by the API (client), activity inputs (workflow sandbox), activity results (activity worker), the result (workflow).
    for (const type of ['EVENT_TYPE_WORKFLOW_EXECUTION_STARTED', 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED', 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED', 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED'] as const) {
      const payloads = byEvent(type);
      expect(payloads.length, type).toBeGreaterThan(0);
      expect(new Set(payloads.map((p) => utf8(p.metadata![KEY_ID_METADATA_KEY]))), type).toEqual(new Set([aliceKey]));
    }
    for (const workflowId of [...aliceWorkflows, ...bobWorkflows]) {
      const expected = aliceWorkflows.includes(workflowId) ? aliceKey : bobKey;
      for (const p of payloadsOf(await rawHistory(workflowId))) expect(utf8(p.metadata![KEY_ID_METADATA_KEY]), workflowId).toBe(expected);
    }
  });

  it('with the codec the history decodes, and the text is back', async () => {
    const decoded = await codec().decode(payloadsOf(await rawHistory(aliceWorkflows[1]!)));
    expect(decoded.every((p) => utf8(p.metadata!.encoding) !== ENCRYPTED_ENCODING)).toBe(true);
    expect(decoded.map((p) => JSON.stringify(defaultPayloadConverter.fromPayload(p) ?? null)).join('\n')).toContain(aliceMarker);
  });

  it('the codec server refuses anyone without the operator credential, and decodes for the operator', async () => {
    const payloads = payloadsOf(await rawHistory(bobWorkflows[0]!));
    const token = ctx.runtime.config.codec.authToken!;
    expect((await codecCall('decode', payloads, {})).status).toBe(401);
    expect((await codecCall('decode', payloads, { authorization: 'Bearer not-the-operator-token' })).status).toBe(401);
    // An API key is not an operator credential.
    expect((await codecCall('decode', payloads, { authorization: 'Bearer test-key-tenant-a' })).status).toBe(401);
    const ok = await codecCall('decode', payloads, { authorization: `Bearer ${token}` });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.payloads).toHaveLength(payloads.length);
    expect(ok.body.payloads.map((p: { data: string }) => Buffer.from(p.data, 'base64').toString('utf8')).join('\n')).toContain(bobMarker);
    // Encode, as Temporal UI does for a signal typed in: the result is ciphertext that decodes back.
    const plain = defaultPayloadConverter.toPayload({ hello: 'operator' });
    const enc = await codecCall('encode', [plain], { authorization: `Bearer ${token}` });
    expect(enc.status).toBe(200);
    expect(Buffer.from(enc.body.payloads[0].metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
  });

  it('Temporal UI: CORS admits its origin with credentials, and a /codec/login session decodes', async () => {
    const uiOrigin = ctx.runtime.config.codec.corsOrigins[0]!;
    const preflight = await fetch(`${ctx.baseUrl}/codec/decode`, { method: 'OPTIONS', headers: { origin: uiOrigin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
    const stranger = await fetch(`${ctx.baseUrl}/codec/decode`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();

    const wrong = await fetch(`${ctx.baseUrl}/codec/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const login = await fetch(`${ctx.baseUrl}/codec/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: ctx.runtime.config.codec.authToken! }).toString() });
    expect(login.status).toBe(200);
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const session = setCookie.split(';')[0]!;
    const payloads = payloadsOf(await rawHistory(bobWorkflows[0]!));
    const viaUi = await codecCall('decode', payloads, { cookie: session, origin: uiOrigin, 'x-namespace': ctx.runtime.config.temporal.namespace });
    expect(viaUi.status).toBe(200);
    const forged = session.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await codecCall('decode', payloads, { cookie: forged })).status).toBe(401);
  });

  it("after destroyUserKey the user's history cannot be decoded anywhere; another user's still decodes", async () => {
    const aliceKey = (await liveKeyId(ctx.userKey(alice)))!;
    // A second process (its own cache) that decoded alice a moment ago.
    const other = new PayloadKeyStore(ctx.runtime.pool, new MasterKeyring(ctx.runtime.config.payloads.masterKey), { cacheTtlMs: 300 });
    const otherCodec = new EncryptionCodec(other);
    const alicePayloads = payloadsOf(await rawHistory(aliceWorkflows[1]!));
    await otherCodec.decode(alicePayloads);

    await keys().destroyUserKey(ctx.userKey(alice));
    await keys().destroyUserKey(ctx.userKey(alice)); // idempotent

    await expect(codec().decode(alicePayloads)).rejects.toThrow(DataKeyDestroyedError);
    await expect(codec().decode(alicePayloads)).rejects.toThrow(/data key destroyed/);
    // Nothing of the key is left in PostgreSQL: a tombstone without key material or owner.
    const { rows } = await ctx.runtime.pool.query('SELECT user_id, wrapped_key, master_key_id, destroyed_at FROM user_data_keys WHERE key_id = $1', [aliceKey]);
    expect(rows).toEqual([{ user_id: null, wrapped_key: null, master_key_id: null, destroyed_at: expect.any(Date) }]);
    // The other process honours the purge once its cache entry expires (PAYLOAD_KEY_CACHE_SECONDS).
    await new Promise((r) => setTimeout(r, 400));
    await expect(otherCodec.decode(alicePayloads)).rejects.toThrow(/data key destroyed/);
    // Every copy: the raw history fetched again, through the codec server too.
    const res = await codecCall('decode', payloadsOf(await rawHistory(aliceWorkflows[0]!)), { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/data key destroyed/);

    const bobDecoded = await codec().decode(payloadsOf(await rawHistory(bobWorkflows[0]!)));
    expect(bobDecoded.map((p) => utf8(p.data)).join('\n')).toContain(bobMarker);
    expect(await liveKeyId(ctx.userKey(bob))).toBeDefined();
  });

  it('a user whose key was destroyed and who comes back gets a new key; the old history stays shredded', async () => {
    const posted = await ctx.call('POST', `/v1/users/${alice}/memories`, { text: `again ${aliceMarker}`, type: 'fact' });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    const fresh = payloadsOf(await rawHistory(posted.body.workflowId));
    const newKey = await liveKeyId(ctx.userKey(alice));
    expect(newKey).toBeDefined();
    expect(new Set(fresh.map((p) => utf8(p.metadata![KEY_ID_METADATA_KEY])))).toEqual(new Set([newKey]));
    await expect(codec().decode(payloadsOf(await rawHistory(aliceWorkflows[1]!)))).rejects.toThrow(/data key destroyed/);
  });

  it("concurrent first uses of a user's key in several processes agree on one key", async () => {
    const ring = new MasterKeyring(ctx.runtime.config.payloads.masterKey);
    const dave = `${ctx.prefix}-dave`;
    const stores = Array.from({ length: 5 }, () => new PayloadKeyStore(ctx.runtime.pool, ring, { cacheTtlMs: 1000 }));
    const got = await Promise.all(stores.map((s) => s.encryptionKey(dave)));
    expect(new Set(got.map((g) => g.keyId)).size).toBe(1);
    expect(new Set(got.map((g) => g.key.toString('hex'))).size).toBe(1);
  });

  it('master key rotation re-wraps data keys; history written before it still decodes', async () => {
    const pool = ctx.runtime.pool;
    const devKey = ctx.runtime.config.payloads.masterKey;
    const newKey = randomBytes(32);
    const bobPayloads = payloadsOf(await rawHistory(bobWorkflows[0]!));
    const rotated = new PayloadKeyStore(pool, new MasterKeyring(newKey, [devKey]), { cacheTtlMs: 1000 });
    const moved = await rotated.rewrapAll();
    expect(moved).toBeGreaterThanOrEqual(2);
    expect(await rotated.rewrapAll()).toBe(0);
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM user_data_keys WHERE destroyed_at IS NULL AND master_key_id <> $1', [new MasterKeyring(newKey).currentId]);
    expect(Number(rows[0]!.n)).toBe(0);
    // Only the new master key is needed now; the old one alone no longer unwraps anything.
    const decoded = await new EncryptionCodec(new PayloadKeyStore(pool, new MasterKeyring(newKey), { cacheTtlMs: 1000 })).decode(bobPayloads);
    expect(decoded.map((p) => utf8(p.data)).join('\n')).toContain(bobMarker);
    await expect(new EncryptionCodec(new PayloadKeyStore(pool, new MasterKeyring(devKey), { cacheTtlMs: 1000 })).decode(bobPayloads)).rejects.toThrow(/PAYLOAD_MASTER_KEYS_OLD/);
    // Rotate back so the runtime (development key) keeps working for the rest of the file.
    expect(await new PayloadKeyStore(pool, new MasterKeyring(devKey, [newKey]), { cacheTtlMs: 1000 }).rewrapAll()).toBe(moved);
  });
});
