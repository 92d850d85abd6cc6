import { metrics } from '../../observability/metrics';
import { createHash } from 'node:crypto';
import { ChromaClient, ChromaForbiddenError, ChromaNotFoundError, ChromaUnauthorizedError, type Collection, type Metadata, type Where } from 'chromadb';
import { chromaHeaders, type ChromaAccess } from '../../config/connections';
import { useChromaTransport } from './chroma-transport';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import type { VectorHit } from '../../core/ports/memory';

/** Chroma limits collection names to 63 characters. */
export const MAX_COLLECTION_NAME = 63;
const USER_SUFFIX_LENGTH = 26; // "_u" + 24 hex digits
/** Longest prefix a per-user collection name can carry. */
export const MAX_PREFIX = MAX_COLLECTION_NAME - USER_SUFFIX_LENGTH;

/**
 * The collection that holds one user's vectors: `${prefix}_u${sha256(userId)[0..24]}`. Hashing
 * keeps any user id within Chroma's name rules; `user_id` is still written on every record and
 * checked on every read, so not even a hash collision could hand one user another's vectors.
 */
export function userCollectionName(prefix: string, userId: string): string {
  const hash = createHash('sha256').update(userId, 'utf8').digest('hex').slice(0, 24);
  return `${prefix.slice(0, MAX_PREFIX)}_u${hash}`;
}

/**
 * The one way this service opens a Chroma client: every index, the health check and the start-up
 * readiness probe come through here, so a token, tenant or database (CHROMA_AUTH_TOKEN,
 * CHROMA_TENANT, CHROMA_DATABASE) reaches every request, and every request goes over the
 * keep-alive transport of chroma-transport.ts rather than the global fetch. `access` is empty
 * for the local Chroma; left out, only in tests of that local one.
 */
export function chromaClient(url: string, access: ChromaAccess = {}): ChromaClient {
  const u = new URL(url);
  const headers = chromaHeaders(access);
  const client = new ChromaClient({
    host: u.hostname,
    port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)),
    ssl: u.protocol === 'https:',
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(access.tenant ? { tenant: access.tenant } : {}),
    ...(access.database ? { database: access.database } : {}),
  });
  useChromaTransport(client);
  return client;
}

/**
 * Proves Chroma answers this client's credentials in its tenant and database. Chroma answers its
 * heartbeat to anyone (and so may a proxy in front of it), so the heartbeat alone would call a
 * Chroma that refuses every read and write "ok": counting the collections is the cheapest call that
 * goes through authentication and names the tenant and database.
 */
export async function chromaAnswers(client: ChromaClient): Promise<void> {
  await client.countCollections();
}

/**
 * The refused credential in an error's cause chain, if any. Matched by name as well as by class: a
 * second copy of the client (another module format of the same package, loaded by a library) has
 * classes of its own.
 */
function refusal(err: unknown): 'unauthorised' | 'forbidden' | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ChromaUnauthorizedError || e.name === 'ChromaAuthError') return 'unauthorised';
    if (e instanceof ChromaForbiddenError || e.name === 'ChromaForbiddenError') return 'forbidden';
  }
  return undefined;
}

/** A refused credential: every such call fails until an operator acts, so messages say so. */
export function isChromaAuthFailure(err: unknown): boolean {
  return refusal(err) !== undefined;
}

/**
 * Why a Chroma call failed, for messages an operator reads (health, recall's failed route, start-up):
 * a refused credential names the variables to check; anything else is the client's own message.
 */
export function chromaFailureReason(err: unknown): string {
  const refused = refusal(err);
  if (refused === 'unauthorised') return 'unauthorised (HTTP 401): check CHROMA_AUTH_TOKEN and CHROMA_AUTH_HEADER';
  if (refused === 'forbidden') return 'forbidden (HTTP 403): the token may not use this tenant or database (CHROMA_TENANT, CHROMA_DATABASE)';
  return err instanceof Error ? err.message : String(err);
}

/**
 * Every index is written to disk from its first write (`sync_threshold` 1; Chroma's default waits
 * for 1,000 vectors). The server keeps a bounded number of indexes loaded (src/stack/local-chroma.ts)
 * and reads an evicted one back from disk; an index never written there fails its next query with
 * "Nothing found on disk" (chroma-core/chroma#4212), and most users hold far fewer than 1,000 vectors.
 */
export const PERSIST_FROM_FIRST_WRITE = { batch_size: 1, sync_threshold: 1 } as const;
const COLLECTION_CONFIG = { hnsw: { space: 'cosine' as const, ...PERSIST_FROM_FIRST_WRITE } };

/**
 * One Chroma collection per user. A metadata filter (`where: {user_id}`) on a shared collection
 * costs Chroma time proportional to the user's record count before the nearest-neighbour search
 * even starts (bench: 64 ms at 10k, 419 ms at 100k, against ~3 ms for the same search in a
 * collection of its own), so the user filter is the collection itself: no handle this class gives
 * out can reach another user's records. Handles are cached (LRU) because resolving a name costs
 * a round trip; a handle to a collection deleted meanwhile is dropped and resolved once more.
 */
export class UserCollections {
  private readonly cache = new Map<string, Collection>();
  private readonly resolving = new Map<string, Promise<Collection | undefined>>();

  constructor(
    readonly client: ChromaClient,
    private readonly prefix: string,
    private readonly kind: string,
    private readonly maxCached = 10_000,
  ) {}

  name(userId: string): string {
    return userCollectionName(this.prefix, userId);
  }

  /**
   * Runs `fn` on the user's collection. Reads pass `create: false` and get `whenMissing` for a
   * user who has no vectors yet, without creating anything.
   */
  async with<T>(userId: string, opts: { create: boolean; whenMissing: T }, fn: (collection: Collection) => Promise<T>): Promise<T> {
    const collection = await this.resolve(userId, opts.create);
    if (!collection) return opts.whenMissing;
    try {
      return await fn(collection);
    } catch (err) {
      if (!(err instanceof ChromaNotFoundError)) throw err;
      this.cache.delete(userId);
      const again = await this.resolve(userId, opts.create);
      return again ? fn(again) : opts.whenMissing;
    }
  }

  /**
   * Deletes the user's collection (a purge). False when it did not exist; safe to repeat. Another
   * process's cached handle fails with not-found on its next use and resolves the name again.
   */
  async drop(userId: string): Promise<boolean> {
    this.cache.delete(userId);
    try {
      await this.client.deleteCollection({ name: this.name(userId) });
      return true;
    } catch (err) {
      if (err instanceof ChromaNotFoundError) return false;
      throw err;
    } finally {
      // A lookup that raced the delete must not leave a handle to the dead collection behind.
      this.cache.delete(userId);
    }
  }

  private async resolve(userId: string, create: boolean): Promise<Collection | undefined> {
    const cached = this.cache.get(userId);
    if (cached) {
      // Map order is insertion order: re-inserting marks the handle most recently used.
      this.cache.delete(userId);
      this.cache.set(userId, cached);
      return cached;
    }
    // Concurrent first writes for a new user share one creation instead of racing Chroma's.
    const key = `${create}:${userId}`;
    const inFlight = this.resolving.get(key);
    if (inFlight) return inFlight;
    const lookup = this.lookup(userId, create).finally(() => this.resolving.delete(key));
    this.resolving.set(key, lookup);
    return lookup;
  }

  private async lookup(userId: string, create: boolean): Promise<Collection | undefined> {
    let collection: Collection;
    if (create) {
      const metadata: Metadata = { user_id: userId, kind: this.kind };
      collection = await this.client.getOrCreateCollection({ name: this.name(userId), embeddingFunction: null, configuration: COLLECTION_CONFIG, metadata });
    } else {
      try {
        collection = await this.client.getCollection({ name: this.name(userId), embeddingFunction: null as never });
      } catch (err) {
        // Not cached: the user's first write may come from another process at any moment.
        if (err instanceof ChromaNotFoundError) return undefined;
        throw err;
      }
    }
    // A collection created before the setting gets it here, once per process: its next write
    // persists the index, so it survives eviction from then on.
    if (collection.configuration?.hnsw?.sync_threshold !== PERSIST_FROM_FIRST_WRITE.sync_threshold) {
      await collection.modify({ configuration: { hnsw: { ...PERSIST_FROM_FIRST_WRITE } } });
    }
    this.cache.set(userId, collection);
    if (this.cache.size > this.maxCached) this.cache.delete(this.cache.keys().next().value!);
    return collection;
  }
}

/**
 * k nearest neighbours in a user's own collection, as similarities. Hits whose record names
 * another owner are dropped: the collection already is the user filter, this is the second lock.
 */
export async function nearestOwned(collection: Collection, userId: string, query: { embedding: number[]; k: number; where?: Where }): Promise<VectorHit[]> {
  return (await nearestOwnedRecords(collection, userId, query)).map(({ id, similarity }) => ({ id, similarity }));
}

/** {@link nearestOwned} with each record's metadata, for indexes that keep what a hit points to there. */
export async function nearestOwnedRecords(
  collection: Collection,
  userId: string,
  query: { embedding: number[]; k: number; where?: Where },
): Promise<(VectorHit & { metadata: Metadata })[]> {
  const result = await collection.query({ queryEmbeddings: [query.embedding], nResults: query.k, where: query.where, include: ['distances', 'metadatas'] });
  const ids = result.ids[0] ?? [];
  const distances = result.distances?.[0] ?? [];
  const metadatas = result.metadatas?.[0] ?? [];
  return ids.flatMap((id, i) => {
    const metadata = metadatas[i];
    return metadata?.user_id === userId ? [{ id, similarity: 1 - (distances[i] ?? 1), metadata }] : [];
  });
}

/** Runs `fn` over `items` with at most `limit` in flight (deletes across many users' collections). */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/**
 * Moves every record of the collection `sourceName` into the per-user collection `ownerOf` names
 * for it (records it names no owner for stay behind), with metadata from `rewrite`, then deletes
 * the source. Idempotent and safe from two processes at once: upserts, and deleting a collection
 * already gone is fine. Nothing happens when there is no such collection.
 */
async function moveRecords(
  users: UserCollections,
  sourceName: string,
  ownerOf: (m: Metadata) => string | undefined,
  rewrite: (m: Metadata, owner: string) => Metadata,
): Promise<number> {
  let source: Collection;
  try {
    source = await users.client.getCollection({ name: sourceName, embeddingFunction: null as never });
  } catch (err) {
    if (err instanceof ChromaNotFoundError) return 0;
    throw err;
  }
  let moved = 0;
  const PAGE = 1000;
  for (let offset = 0; ; offset += PAGE) {
    const page = await source.get({ limit: PAGE, offset, include: ['embeddings', 'metadatas'] });
    if (page.ids.length === 0) break;
    const byOwner = new Map<string, { ids: string[]; embeddings: number[][]; metadatas: Metadata[] }>();
    page.ids.forEach((id, i) => {
      const metadata = page.metadatas[i];
      const owner = metadata ? ownerOf(metadata) : undefined;
      // A record without an owner cannot be placed; PostgreSQL's outbox re-creates real memories.
      if (owner === undefined || !page.embeddings[i]) return;
      const group = byOwner.get(owner) ?? { ids: [], embeddings: [], metadatas: [] };
      group.ids.push(id);
      group.embeddings.push(page.embeddings[i]!);
      group.metadatas.push(rewrite(metadata!, owner));
      byOwner.set(owner, group);
    });
    for (const [owner, group] of byOwner) {
      await users.with(owner, { create: true, whenMissing: undefined }, (c) => c.upsert(group));
      moved += group.ids.length;
    }
  }
  await users.client.deleteCollection({ name: sourceName }).catch((err: unknown) => {
    if (!(err instanceof ChromaNotFoundError)) throw err;
  });
  return moved;
}

/**
 * Moves the records of a collection shared by all users (the layout before per-user
 * collections) into per-user collections, then deletes it.
 */
export async function migrateSharedCollection(users: UserCollections, legacyName: string, toMetadata: (m: Metadata) => Metadata = (m) => m): Promise<number> {
  return moveRecords(users, legacyName, (m) => (typeof m.user_id === 'string' ? m.user_id : undefined), (m) => toMetadata(m));
}

/**
 * Moves a user's records to the collection of their new key (the rekey to (tenant, user) keys),
 * rewriting the owner on each record, then deletes the old collection.
 */
export async function moveUserRecords(users: UserCollections, from: string, to: string): Promise<number> {
  return moveRecords(users, users.name(from), (m) => (m.user_id === from ? to : undefined), (m) => ({ ...m, user_id: to }));
}

/** Writes records to the user's own collection (created on first write), each stamped with the owner. */
export async function upsertOwned(users: UserCollections, userId: string, records: readonly { id: string; embedding: number[]; metadata: Metadata }[]): Promise<void> {
  if (records.length === 0) return;
  await users.with(userId, { create: true, whenMissing: undefined }, (collection) =>
    collection.upsert({
      ids: records.map((r) => r.id),
      embeddings: records.map((r) => r.embedding),
      metadatas: records.map((r) => ({ ...r.metadata, user_id: userId })),
    }),
  );
}

/** Runs a Chroma call of one index `kind`, turning its failure into the retryable vectorStoreUnavailable. */
export async function chromaCall<T>(kind: string, operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await metrics.timed('chroma', `${kind}.${operation}`, fn);
  } catch (err) {
    const reason = isChromaAuthFailure(err) ? `: ${chromaFailureReason(err)}` : '';
    throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, `Chroma ${kind} ${operation} failed${reason}`, { operation }, { cause: err });
  }
}
