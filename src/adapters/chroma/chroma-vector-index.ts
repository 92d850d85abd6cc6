import { metrics } from '../../observability/metrics';
import type { Where } from 'chromadb';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import type { VectorHit, VectorIndex, VectorItem } from '../../core/ports/memory';
import type { MemoryType } from '../../core/types';
import { nearestOwnedThroughLangChain, UserChromaStores } from './langchain-chroma';
import type { ChromaAccess } from '../../config/connections';
import { chromaAnswers, chromaClient, chromaFailureReason, forEachLimited, isChromaAuthFailure, migrateSharedCollection, moveUserRecords, UserCollections } from './user-collections';

/** Parallel deletes when the sweep retires vectors of many users at once. */
const DELETE_CONCURRENCY = 8;

/**
 * Chroma-backed vector index with one collection per user (`${CHROMA_COLLECTION}_u<hash>`), so
 * a search is confined to the user by construction and costs what an unfiltered search costs.
 * Every record still carries `user_id`, and reads drop any hit whose owner is not the caller.
 * The adapter has no method that can search or delete without naming the user.
 */
export class ChromaVectorIndex implements VectorIndex {
  /** Reads go through LangChain's `Chroma` store on the user's collection (the ANN route's retriever uses this index). */
  private readonly stores: UserChromaStores;

  private constructor(private readonly users: UserCollections) {
    this.stores = new UserChromaStores(users.client);
  }

  /**
   * Connects, and moves the vectors of a pre-0.2 shared collection named `collection` (if any)
   * into per-user collections.
   */
  static async create(opts: { url: string; access?: ChromaAccess; collection: string }): Promise<ChromaVectorIndex> {
    const users = new UserCollections(chromaClient(opts.url, opts.access), opts.collection, 'memories');
    await migrateSharedCollection(users, opts.collection);
    return new ChromaVectorIndex(users);
  }

  /** The Chroma collection that holds this user's vectors (for operators and tests). */
  collectionName(userId: string): string {
    return this.users.name(userId);
  }

  async upsert({ userId, items }: { userId: string; items: VectorItem[] }): Promise<void> {
    if (items.length === 0) return;
    await this.guard('upsert', () =>
      this.users.with(userId, { create: true, whenMissing: undefined }, (collection) =>
        collection.upsert({
          ids: items.map((i) => i.id),
          embeddings: items.map((i) => i.embedding),
          metadatas: items.map((i) => ({ user_id: userId, type: i.type, created_at: i.createdAt })),
        }),
      ),
    );
  }

  async query({ userId, embedding, k, types }: { userId: string; embedding: number[]; k: number; types?: MemoryType[] }): Promise<VectorHit[]> {
    // Only a type restriction needs a metadata filter; the user is the collection.
    const where: Where | undefined = types && types.length > 0 ? { type: { $in: types } } : undefined;
    return this.guard('query', () =>
      this.users.with(userId, { create: false, whenMissing: [] as VectorHit[] }, (collection) =>
        nearestOwnedThroughLangChain(this.stores.storeOf(collection), userId, { embedding, k, where }),
      ),
    );
  }

  async remove({ userId, ids }: { userId: string; ids: string[] }): Promise<void> {
    if (ids.length === 0) return;
    await this.guard('remove', () =>
      this.users.with(userId, { create: false, whenMissing: undefined }, (collection) => collection.delete({ ids, where: { user_id: userId } })),
    );
  }

  async vectorsOf({ userId, ids }: { userId: string; ids: string[] }): Promise<Map<string, number[]>> {
    if (ids.length === 0) return new Map();
    return this.guard('get', () =>
      this.users.with(userId, { create: false, whenMissing: new Map<string, number[]>() }, async (collection) => {
        const got = await collection.get({ ids, where: { user_id: userId }, include: ['embeddings'] });
        return new Map(got.ids.flatMap((id, i) => (got.embeddings[i] ? [[id, Array.from(got.embeddings[i]!)] as [string, number[]]] : [])));
      }),
    );
  }

  async removeMany({ items }: { items: { userId: string; id: string }[] }): Promise<void> {
    if (items.length === 0) return;
    const byUser = new Map<string, string[]>();
    for (const { userId, id } of items) byUser.set(userId, [...(byUser.get(userId) ?? []), id]);
    await forEachLimited([...byUser], DELETE_CONCURRENCY, ([userId, ids]) => this.remove({ userId, ids }));
  }

  /** Moves a user's vectors to their new key (see rekeyLegacyUsers). */
  async moveUser({ from, to }: { from: string; to: string }): Promise<number> {
    return moveUserRecords(this.users, from, to);
  }

  async dropUser(userId: string): Promise<boolean> {
    return this.guard('drop', () => this.users.drop(userId));
  }

  async heartbeat(): Promise<void> {
    await this.guard('heartbeat', () => chromaAnswers(this.users.client));
  }

  private async guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await metrics.timed('chroma', `memory.${operation}`, fn);
    } catch (err) {
      if (err instanceof MemoryServiceError) throw err;
      const reason = isChromaAuthFailure(err) ? `: ${chromaFailureReason(err)}` : '';
      throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, `Chroma ${operation} failed${reason}`, { operation }, { cause: err });
    }
  }
}
