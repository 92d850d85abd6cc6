import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from '../adapters/postgres/pool';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { AuthenticationFailedError, open, seal } from './aes-gcm';

/**
 * The key hierarchy of encrypted Temporal payloads (docs/security.md):
 *
 *   master key (PAYLOAD_MASTER_KEY, outside the database)
 *     └─ wraps one data key per user, and one system data key   (table user_data_keys)
 *          └─ encrypts that user's workflow and activity payloads (AES-256-GCM, payload-codec.ts)
 *
 * Destroying a user's data key (purge) makes every copy of their Temporal payloads unreadable,
 * wherever it was archived or exported. The master key only ever touches 32-byte data keys, so
 * rotating it means re-wrapping one row per user, never re-encrypting history.
 */

/** What the purge workflow needs from payload encryption. */
export interface UserKeyDestroyer {
  /** Crypto-shreds the user's data key; idempotent. Payloads encrypted under it can never be decrypted again. */
  destroyUserKey(userKey: string): Promise<void>;
}

/** A payload could not be decrypted. */
export class PayloadDecryptionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PayloadDecryptionError';
  }
}

/** The payload's data key was destroyed (its user was purged): the payload is gone for good. */
export class DataKeyDestroyedError extends PayloadDecryptionError {
  constructor(
    readonly keyId: string,
    readonly destroyedAt: Date,
  ) {
    super(`data key destroyed: payload key ${keyId} was crypto-shredded at ${destroyedAt.toISOString()} (its user was purged); the payload cannot be decrypted`);
    this.name = 'DataKeyDestroyedError';
  }
}

/** No row for the payload's key id: written by another deployment (or its tombstone was removed by hand). */
export class UnknownDataKeyError extends PayloadDecryptionError {
  constructor(readonly keyId: string) {
    super(`data key unknown: no payload key ${keyId} in user_data_keys (encrypted by another deployment, or destroyed and its tombstone deleted)`);
    this.name = 'UnknownDataKeyError';
  }
}

/**
 * The channel a key's destruction is announced on, by the statement that destroys it: PostgreSQL
 * delivers the notice when that transaction commits, and never for one rolled back.
 */
export const KEY_DESTROYED_CHANNEL = 'payload_key_destroyed';

/**
 * Announcements of destroyed data keys, made in any process (PostgreSQL LISTEN,
 * src/adapters/postgres/payload-key-listener.ts). `onConnected` runs each time the feed starts
 * listening, the first time included: notices sent while it did not listen are lost.
 */
export interface KeyDestructionFeed {
  listen(handlers: { onNotice(payload: string | undefined): void; onConnected(): void; log(message: string, err?: unknown): void }): { close(): Promise<void> };
}

/** Stable, non-secret name of a master key, stored next to every key it wraps. */
export function masterKeyId(key: Buffer): string {
  return `mk-${createHmac('sha256', key).update('jarvis-memory/payload-master-key-id').digest('hex').slice(0, 16)}`;
}

const wrapAad = (keyId: string) => `jarvis-memory/data-key/v1/${keyId}`;

/** The current master key and the retired ones that still unwrap keys wrapped before a rotation. */
export class MasterKeyring {
  readonly currentId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(current: Buffer, old: Buffer[] = []) {
    if (current.length !== 32) throw new Error('the payload master key must be 32 bytes');
    this.currentId = masterKeyId(current);
    this.keys.set(this.currentId, current);
    for (const k of old) if (!this.keys.has(masterKeyId(k))) this.keys.set(masterKeyId(k), k);
  }

  wrap(keyId: string, dataKey: Buffer): { wrapped: Buffer; masterKeyId: string } {
    return { wrapped: seal(this.keys.get(this.currentId)!, dataKey, wrapAad(keyId)), masterKeyId: this.currentId };
  }

  unwrap(keyId: string, wrapped: Uint8Array, wrappedBy: string): Buffer {
    const master = this.keys.get(wrappedBy);
    if (!master) {
      throw new PayloadDecryptionError(`payload key ${keyId} is wrapped by master key ${wrappedBy}, which is not configured: add it to PAYLOAD_MASTER_KEYS_OLD`);
    }
    try {
      return open(master, wrapped, wrapAad(keyId), `data key ${keyId}`);
    } catch (err) {
      if (err instanceof AuthenticationFailedError) throw new PayloadDecryptionError(`${err.message} (wrong master key ${wrappedBy}?)`, { cause: err });
      throw err;
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_CACHED = 10_000;

interface KeyRow {
  key_id: string;
  wrapped_key: Buffer | null;
  master_key_id: string | null;
  destroyed_at: Date | null;
}

/**
 * Data keys in PostgreSQL (`user_data_keys`), created on first use and unwrapped into a
 * per-process cache. A purge is honoured in the process that runs it at once, in the others when
 * its notice arrives ({@link PayloadKeyStore.follow}: about a second); the cache's lifetime
 * `cacheTtlMs` (PAYLOAD_KEY_CACHE_SECONDS, default 30 s) bounds it while notices cannot arrive.
 */
export class PayloadKeyStore implements UserKeyDestroyer {
  private readonly keys = new Map<string, { key: Buffer; expires: number }>();
  private readonly liveKeyOf = new Map<string, { keyId: string; expires: number }>();
  private readonly destroyed = new Map<string, Date>();
  private readonly inflight = new Map<string, Promise<{ keyId: string; key: Buffer }>>();
  /** Bumped by every destroy: a lookup that started before it must not cache what it read. */
  private epoch = 0;

  constructor(
    private readonly db: Queryable,
    private readonly master: MasterKeyring,
    private readonly opts: { cacheTtlMs: number; now?: () => number } = { cacheTtlMs: 30_000 },
  ) {}

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** The live data key of a user (created on first use), or the system key for `null`. */
  async encryptionKey(userKey: string | null): Promise<{ keyId: string; key: Buffer }> {
    const owner = userKey === null ? 'system' : `user:${userKey}`;
    const live = this.liveKeyOf.get(owner);
    const cached = live && live.expires > this.now() ? this.keys.get(live.keyId) : undefined;
    if (live && cached && cached.expires > this.now()) return { keyId: live.keyId, key: cached.key };
    return this.once(`live:${owner}`, async () => {
      const epoch = this.epoch;
      const row = (await this.liveRow(userKey)) ?? (await this.createKey(userKey));
      const key = await this.unwrapRow(row);
      // Destroyed while it was being read: what it sealed could never be opened again.
      const gone = this.destroyed.get(row.key_id);
      if (gone) throw purgedWhileEncrypting(new DataKeyDestroyedError(row.key_id, gone));
      if (epoch === this.epoch) {
        this.remember(row.key_id, key);
        cap(this.liveKeyOf).set(owner, { keyId: row.key_id, expires: this.now() + this.opts.cacheTtlMs });
      }
      return { keyId: row.key_id, key };
    });
  }

  /** The data key a payload names; throws DataKeyDestroyedError once its user was purged. */
  async decryptionKey(keyId: string): Promise<Buffer> {
    const gone = this.destroyed.get(keyId);
    if (gone) throw new DataKeyDestroyedError(keyId, gone);
    const cached = this.keys.get(keyId);
    if (cached && cached.expires > this.now()) return cached.key;
    if (!UUID.test(keyId)) throw new PayloadDecryptionError(`malformed payload key id "${keyId.slice(0, 40)}"`);
    const { key } = await this.once(`id:${keyId}`, async () => {
      const epoch = this.epoch;
      const { rows } = await this.db.query<KeyRow>('SELECT key_id, wrapped_key, master_key_id, destroyed_at FROM user_data_keys WHERE key_id = $1', [keyId]);
      const row = rows[0];
      if (!row) throw new UnknownDataKeyError(keyId);
      if (row.destroyed_at) {
        cap(this.destroyed).set(keyId, row.destroyed_at);
        this.forget(keyId);
        throw new DataKeyDestroyedError(keyId, row.destroyed_at);
      }
      const unwrapped = await this.unwrapRow(row);
      const gone = this.destroyed.get(keyId);
      if (gone) throw new DataKeyDestroyedError(keyId, gone);
      if (epoch === this.epoch) this.remember(keyId, unwrapped);
      return { keyId, key: unwrapped };
    });
    return key;
  }

  async destroyUserKey(userKey: string): Promise<void> {
    this.epoch++;
    // The notice is part of the statement, so of its transaction: sent on commit, never for a rollback.
    const { rows } = await this.db.query<{ key_id: string; destroyed_at: Date }>(
      `WITH destroyed AS (
         UPDATE user_data_keys SET wrapped_key = NULL, master_key_id = NULL, user_id = NULL, destroyed_at = now()
          WHERE kind = 'user' AND user_id = $1 AND destroyed_at IS NULL
          RETURNING key_id, destroyed_at)
       SELECT key_id, destroyed_at, pg_notify($2, json_build_object('keyId', key_id, 'destroyedAt', destroyed_at)::text) FROM destroyed`,
      [userKey, KEY_DESTROYED_CHANNEL],
    );
    for (const row of rows) this.keyDestroyed(row.key_id, row.destroyed_at);
    this.liveKeyOf.delete(`user:${userKey}`);
  }

  /**
   * Follows the key destructions of every process: each notice evicts its key here and remembers
   * it destroyed; each (re)connection drops every cached key, since notices sent while the feed
   * was not listening are lost. While it is not listening the cache's lifetime is the bound.
   */
  follow(feed: KeyDestructionFeed, log: (message: string, err?: unknown) => void): { close(): Promise<void> } {
    return feed.listen({
      onNotice: (payload) => {
        const notice = parseNotice(payload);
        // A notice that names no key still says a key was destroyed: forget them all.
        if (notice) this.keyDestroyed(notice.keyId, notice.destroyedAt);
        else this.dropCachedKeys();
      },
      onConnected: () => this.dropCachedKeys(),
      log,
    });
  }

  /** Drops every unwrapped key, keeping what is known destroyed: the next use reads the table again. */
  dropCachedKeys(): void {
    this.epoch++;
    // A caller from now on reads anew rather than join a lookup that may have read a stale row.
    this.inflight.clear();
    for (const id of [...this.keys.keys()]) this.forget(id);
    this.liveKeyOf.clear();
  }

  /**
   * Re-wraps every live data key still wrapped by a retired master key with the current one.
   * Afterwards the retired key can be removed from PAYLOAD_MASTER_KEYS_OLD. Safe to run from
   * several processes at once; returns how many rows this call re-wrapped.
   */
  async rewrapAll(): Promise<number> {
    const { rows } = await this.db.query<KeyRow>(
      'SELECT key_id, wrapped_key, master_key_id, destroyed_at FROM user_data_keys WHERE destroyed_at IS NULL AND master_key_id <> $1',
      [this.master.currentId],
    );
    let done = 0;
    for (const row of rows) if (await this.rewrap(row, this.master.unwrap(row.key_id, row.wrapped_key!, row.master_key_id!))) done++;
    return done;
  }

  /** Drops every unwrapped key from memory and what it knew destroyed (tests; a process that wants to re-read the table). */
  clearCache(): void {
    this.dropCachedKeys();
    this.destroyed.clear();
  }

  private keyDestroyed(keyId: string, destroyedAt: Date): void {
    // A lookup already under way must not cache the key it read before the destruction.
    this.epoch++;
    this.inflight.clear();
    this.forget(keyId);
    cap(this.destroyed).set(keyId, destroyedAt);
    for (const [owner, live] of this.liveKeyOf) if (live.keyId === keyId) this.liveKeyOf.delete(owner);
  }

  private async liveRow(userKey: string | null): Promise<KeyRow | undefined> {
    const { rows } =
      userKey === null
        ? await this.db.query<KeyRow>(`SELECT key_id, wrapped_key, master_key_id, destroyed_at FROM user_data_keys WHERE kind = 'system' AND destroyed_at IS NULL`)
        : await this.db.query<KeyRow>(`SELECT key_id, wrapped_key, master_key_id, destroyed_at FROM user_data_keys WHERE kind = 'user' AND user_id = $1 AND destroyed_at IS NULL`, [userKey]);
    return rows[0];
  }

  private async createKey(userKey: string | null): Promise<KeyRow> {
    const keyId = randomUUID();
    const dataKey = randomBytes(32);
    const { wrapped, masterKeyId } = this.master.wrap(keyId, dataKey);
    dataKey.fill(0);
    // Two processes may create a user's first key at once: the unique index keeps one, both use it.
    await this.db.query(
      `INSERT INTO user_data_keys (key_id, kind, user_id, wrapped_key, master_key_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [keyId, userKey === null ? 'system' : 'user', userKey, wrapped, masterKeyId],
    );
    const row = await this.liveRow(userKey);
    if (!row) throw new Error('payload data key vanished right after creation (destroyed concurrently?)');
    return row;
  }

  private async unwrapRow(row: KeyRow): Promise<Buffer> {
    const key = this.master.unwrap(row.key_id, row.wrapped_key!, row.master_key_id!);
    // A key still wrapped by a retired master key is moved to the current one on first use.
    if (row.master_key_id !== this.master.currentId) await this.rewrap(row, key);
    return key;
  }

  private async rewrap(row: KeyRow, key: Buffer): Promise<boolean> {
    const { wrapped, masterKeyId } = this.master.wrap(row.key_id, key);
    const { rowCount } = await this.db.query(
      'UPDATE user_data_keys SET wrapped_key = $2, master_key_id = $3 WHERE key_id = $1 AND master_key_id = $4 AND destroyed_at IS NULL',
      [row.key_id, wrapped, masterKeyId, row.master_key_id],
    );
    return (rowCount ?? 0) > 0;
  }

  private remember(keyId: string, key: Buffer): void {
    cap(this.keys).set(keyId, { key, expires: this.now() + this.opts.cacheTtlMs });
  }

  private forget(keyId: string): void {
    // Not zero-filled: an encryption that fetched the key a moment ago may still be using the buffer.
    this.keys.delete(keyId);
  }

  /** Concurrent lookups of one key share one query. */
  private once(id: string, load: () => Promise<{ keyId: string; key: Buffer }>): Promise<{ keyId: string; key: Buffer }> {
    let p = this.inflight.get(id);
    if (!p) {
      const started = load().finally(() => {
        if (this.inflight.get(id) === started) this.inflight.delete(id);
      });
      p = started;
      this.inflight.set(id, p);
    }
    return p;
  }
}

function parseNotice(payload: string | undefined): { keyId: string; destroyedAt: Date } | undefined {
  try {
    const n = JSON.parse(payload ?? '') as { keyId?: unknown; destroyedAt?: unknown };
    const destroyedAt = new Date(typeof n.destroyedAt === 'string' ? n.destroyedAt : Number.NaN);
    return typeof n.keyId === 'string' && UUID.test(n.keyId) && !Number.isNaN(destroyedAt.getTime()) ? { keyId: n.keyId, destroyedAt } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An encryption for a user whose key a purge destroyed while the key was being read: the request
 * raced the purge, as a write that finds its user gone does, and is answered the same 409.
 */
function purgedWhileEncrypting(cause: DataKeyDestroyedError): MemoryServiceError {
  return new MemoryServiceError(ErrorCode.conflict, "the user's data was purged while this request ran: their payload key was destroyed; nothing was started: send it again to start anew", { reason: 'user_purged' }, { cause });
}

/** Keeps a cache map bounded: the oldest entry leaves before a new one comes in. */
function cap<K, V>(map: Map<K, V>): Map<K, V> {
  if (map.size >= MAX_CACHED) map.delete(map.keys().next().value!);
  return map;
}
