import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool } from '../src/adapters/postgres/pool';
import { migrate } from '../src/adapters/postgres/migrate';
import { KEY_LISTENER_APPLICATION_NAME, PostgresKeyDestructionFeed } from '../src/adapters/postgres/payload-key-listener';
import { loadConfig } from '../src/config';
import { ErrorCode, MemoryServiceError } from '../src/core/errors';
import { destroyUserDataKey } from '../src/privacy/user-purge';
import { createRuntime } from '../src/runtime';
import { EncryptionCodec } from '../src/security/payload-codec';
import { DataKeyDestroyedError, MasterKeyring, PayloadKeyStore } from '../src/security/payload-keys';
import { workflowCallError } from '../src/shared/workflow-failures';
import { proxiedTestDatabase, type FaultProxy } from './support/fault-proxy';
import { TEST_KEY } from './support/harness';
import { poll } from './support/poll';

// Many API and worker processes share one PostgreSQL, each with its own cache of unwrapped data
// keys. A purge destroys a user's key in one of them; the others must stop using it within about a
// second (the notice of the destruction), not when their cache expires — and while they cannot hear
// the notice, the cache's lifetime still bounds it. Each store below stands for one process: its
// own pool, its own listener.

/** Far longer than any bound asserted here: a refusal inside it came from a notice, not an expiry. */
const TTL_MS = 120_000;
/** What a notice may take to reach another process on a loaded machine: well under the TTL. */
const NOTICE_WITHIN_MS = 5000;

let directUrl: string;
let proxiedUrl: string;
let proxy: FaultProxy;
const pools: pg.Pool[] = [];
const feeds: { close(): Promise<void> }[] = [];
let ring: MasterKeyring;
let prefix: string;
let config: ReturnType<typeof loadConfig>;
const logged: string[] = [];

function processStore(opts: { url?: string; db?: pg.Pool | { query: pg.Pool['query'] }; now?: () => number; heartbeatMs?: number } = {}): PayloadKeyStore {
  const pool = createPool(directUrl, 2);
  pools.push(pool);
  const store = new PayloadKeyStore(opts.db ?? pool, ring, { cacheTtlMs: TTL_MS, now: opts.now });
  const feed = new PostgresKeyDestructionFeed(opts.url ?? directUrl, { heartbeatMs: opts.heartbeatMs ?? 300, timeoutMs: 1000 });
  feeds.push(store.follow(feed, (message) => logged.push(message)));
  return store;
}

let n = 0;
const newUser = () => `${prefix}:u${++n}`;

/** Whether `store` refuses the key as destroyed (rather than serving it from its cache or the table). */
const refuses = (store: PayloadKeyStore, keyId: string): Promise<boolean> =>
  store.decryptionKey(keyId).then(
    () => false,
    (err: unknown) => {
      if (err instanceof DataKeyDestroyedError) return true;
      throw err;
    },
  );

/** Polls until `store` refuses the key; returns how long that took. */
async function refusalAfter(store: PayloadKeyStore, keyId: string, withinMs = NOTICE_WITHIN_MS): Promise<number> {
  const started = Date.now();
  expect(await poll(() => refuses(store, keyId), (yes) => yes, withinMs, 50), `key ${keyId} still served after ${withinMs} ms`).toBe(true);
  return Date.now() - started;
}

let a: PayloadKeyStore;
let b: PayloadKeyStore;

/** Proves `store`'s listener hears notices: a sentinel key destroyed elsewhere is refused. */
async function listening(store: PayloadKeyStore): Promise<void> {
  // Twice: the first refusal may come from the cache dropped when the LISTEN was first in place,
  // with the probe's own notice still on its way; that notice, arriving in the middle of a later
  // step, would end the lookup under way there uncached (a notice of any key does). The second
  // refusal can only come from its notice, and notices arrive in order, so the first is in too.
  for (let probe = 0; probe < 2; probe++) {
    const user = newUser();
    const { keyId } = await store.encryptionKey(user);
    await a.destroyUserKey(user);
    await refusalAfter(store, keyId, 20_000);
  }
}

async function listenerSessions(): Promise<number> {
  const { rows } = await pools[0]!.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [KEY_LISTENER_APPLICATION_NAME]);
  return rows[0]!.n;
}

beforeAll(async () => {
  const stack = inject('stack');
  prefix = `k${randomBytes(4).toString('hex')}`;
  ({ directUrl, proxiedUrl, proxy } = await proxiedTestDatabase(stack.databaseUrl, prefix));
  await migrate(directUrl);
  config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    API_KEYS: `tenant-a:${TEST_KEY}`,
    CHROMA_COLLECTION: `keys_${prefix}`,
    TEMPORAL_TASK_QUEUE: `q-${prefix}`,
  });
  ring = new MasterKeyring(config.payloads.masterKey);
  a = processStore();
  b = processStore();
  await listening(a);
  await listening(b);
});
afterAll(async () => {
  await proxy?.restore();
  for (const f of feeds) await f.close();
  for (const p of pools) await p.end();
  await proxy?.close();
});

describe('a destroyed payload key, in every process', () => {
  it('API and worker runtimes listen from the start and stop listening when closed', async () => {
    const before = await listenerSessions();
    const runtime = await createRuntime(config, { ...inject('stack'), databaseUrl: directUrl, dataDir: '' });
    try {
      const keys = runtime.payloadEncryption!.keys;
      await listening(keys);
      const user = newUser();
      const { keyId } = await keys.encryptionKey(user);
      await destroyUserDataKey({ userKeyDestroyer: a }, user);
      expect(await refusalAfter(keys, keyId)).toBeLessThan(NOTICE_WITHIN_MS);
      expect(await listenerSessions()).toBe(before + 1);
    } finally {
      await runtime.close();
    }
    // Its connection is gone with it: nothing left LISTENing for a closed process.
    expect(await poll(listenerSessions, (count) => count === before, 10_000, 100)).toBe(before);
  });

  it("a purge through one process: another refuses the user's key within seconds, far inside its cache's lifetime", async () => {
    const user = newUser();
    const { keyId, key } = await b.encryptionKey(user);
    expect(await b.decryptionKey(keyId)).toEqual(key);

    await destroyUserDataKey({ userKeyDestroyer: a }, user);

    expect(await refusalAfter(b, keyId)).toBeLessThan(NOTICE_WITHIN_MS);
    // The next encryption is for the id's new life (docs/privacy: a returning user gets a new key).
    const again = await b.encryptionKey(user);
    expect(again.keyId).not.toBe(keyId);
  });

  it('a destroy that is rolled back announces nothing', async () => {
    const kept = newUser();
    const { keyId } = await b.encryptionKey(kept);
    const client = await pools[0]!.connect();
    try {
      await client.query('BEGIN');
      await new PayloadKeyStore(client, ring, { cacheTtlMs: TTL_MS }).destroyUserKey(kept);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    // Notices arrive in commit order: once a later destroy is heard, the rolled-back one would have been.
    const later = newUser();
    const { keyId: laterKey } = await b.encryptionKey(later);
    await a.destroyUserKey(later);
    await refusalAfter(b, laterKey);
    expect(await refuses(b, keyId)).toBe(false);
    expect((await b.encryptionKey(kept)).keyId).toBe(keyId);
  });

  it('an encryption whose key is destroyed while it is read fails with 409 user_purged, and the next one starts a new key', async () => {
    const user = newUser();
    const { keyId } = await a.encryptionKey(user);
    // This process's read of the user's live key is held until the purge has destroyed it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let read!: () => void;
    const readDone = new Promise<void>((resolve) => (read = resolve));
    let holding = false;
    const pool = createPool(directUrl, 2);
    pools.push(pool);
    const gated = {
      query: (async (text: string, values?: unknown[]) => {
        const result = await pool.query(text, values);
        if (holding && /FROM user_data_keys WHERE kind = 'user' AND user_id = \$1/.test(text)) {
          holding = false;
          read();
          await held;
        }
        return result;
      }) as unknown as pg.Pool['query'],
    };
    const c = processStore({ db: gated });
    await listening(c);
    holding = true;
    const codec = new EncryptionCodec(c, () => user);
    const encoding = codec.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"text"') }]).then(
      () => undefined,
      (err: unknown) => err,
    );
    await readDone;
    await destroyUserDataKey({ userKeyDestroyer: a }, user);
    // The notice has reached the process holding the read.
    await refusalAfter(c, keyId);
    release();

    const err = await encoding;
    expect(err).toBeInstanceOf(MemoryServiceError);
    expect((err as MemoryServiceError).code).toBe(ErrorCode.conflict);
    expect((err as MemoryServiceError).context).toEqual({ reason: 'user_purged' });
    expect((err as MemoryServiceError).cause).toBeInstanceOf(DataKeyDestroyedError);
    // What a route makes of it when a workflow start fails so: the same 409 as other purge races.
    expect(workflowCallError(err, { failed: 'start' })).toBe(err);

    const [again] = await codec.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"text"') }]);
    expect(Buffer.from(again!.metadata!['encryption-key-id']!).toString()).not.toBe(keyId);
  });

  it.each(['cut', 'hung'] as const)('while its listener is %s, the cache lifetime bounds a stale key; once back, the whole cache is dropped', async (fault) => {
    let skew = 0;
    const d = processStore({ url: proxiedUrl, now: () => Date.now() + skew, heartbeatMs: 300 });
    await listening(d);
    const first = newUser();
    const { keyId: firstKey } = await d.encryptionKey(first);
    if (fault === 'cut') await proxy.cut();
    else proxy.hang();
    try {
      await a.destroyUserKey(first);
      // No notice can reach it: the cached key is still served…
      expect(await refuses(d, firstKey)).toBe(false);
      // …until the cache's lifetime is over.
      skew += TTL_MS + 1;
      expect(await refuses(d, firstKey)).toBe(true);

      // A key cached and destroyed during the outage, its lifetime far from over.
      const second = newUser();
      const { keyId: secondKey } = await d.encryptionKey(second);
      await a.destroyUserKey(second);
      expect(await refuses(d, secondKey)).toBe(false);
      if (fault === 'hung') {
        // The listener notices the silence by itself (its heartbeat), before the network returns.
        await poll(async () => logged.includes('payload key listener connection stopped answering'), (yes) => yes, 10_000, 100);
      }
      await proxy.restore();
      // Back: the notices it missed are replaced by dropping the cache.
      expect(await refusalAfter(d, secondKey, 20_000)).toBeLessThan(20_000);
    } finally {
      await proxy.restore();
    }
  });
});
