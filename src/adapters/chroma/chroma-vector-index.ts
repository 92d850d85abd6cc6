import { ChromaClient, type Collection, type Where } from 'chromadb';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import type { VectorHit, VectorIndex, VectorItem } from '../../core/ports';
import type { MemoryType } from '../../core/types';

/**
 * Chroma-backed vector index. One collection holds every user's vectors with `user_id` in the
 * metadata, and every operation is filtered by it: the adapter has no method that can search or
 * delete across users.
 */
export class ChromaVectorIndex implements VectorIndex {
  private constructor(
    private readonly client: ChromaClient,
    private readonly collection: Collection,
  ) {}

  /** Connects and creates the collection (cosine space, embeddings supplied by us) if missing. */
  static async create(opts: { url: string; collection: string }): Promise<ChromaVectorIndex> {
    const url = new URL(opts.url);
    const client = new ChromaClient({
      host: url.hostname,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      ssl: url.protocol === 'https:',
    });
    const collection = await client.getOrCreateCollection({
      name: opts.collection,
      embeddingFunction: null,
      configuration: { hnsw: { space: 'cosine' } },
    });
    return new ChromaVectorIndex(client, collection);
  }

  async upsert({ userId, items }: { userId: string; items: VectorItem[] }): Promise<void> {
    if (items.length === 0) return;
    await this.guard('upsert', () =>
      this.collection.upsert({
        ids: items.map((i) => i.id),
        embeddings: items.map((i) => i.embedding),
        metadatas: items.map((i) => ({ user_id: userId, type: i.type, created_at: i.createdAt })),
      }),
    );
  }

  async query({
    userId,
    embedding,
    k,
    types,
  }: {
    userId: string;
    embedding: number[];
    k: number;
    types?: MemoryType[];
  }): Promise<VectorHit[]> {
    const where: Where =
      types && types.length > 0 ? { $and: [{ user_id: userId }, { type: { $in: types } }] } : { user_id: userId };
    const result = await this.guard('query', () =>
      this.collection.query({ queryEmbeddings: [embedding], nResults: k, where, include: ['distances'] }),
    );
    const ids = result.ids[0] ?? [];
    const distances = result.distances?.[0] ?? [];
    return ids.map((id, i) => ({ id, similarity: 1 - (distances[i] ?? 1) }));
  }

  async remove({ userId, ids }: { userId: string; ids: string[] }): Promise<void> {
    if (ids.length === 0) return;
    await this.guard('remove', () => this.collection.delete({ ids, where: { user_id: userId } }));
  }

  async removeMany({ items }: { items: { userId: string; id: string }[] }): Promise<void> {
    if (items.length === 0) return;
    // Ids are unique across users; the owner filter still confines the delete to the users the
    // caller named, so no call can reach vectors of a user it did not mention.
    const users = [...new Set(items.map((i) => i.userId))];
    const where: Where = users.length === 1 ? { user_id: users[0]! } : { user_id: { $in: users } };
    await this.guard('remove', () => this.collection.delete({ ids: items.map((i) => i.id), where }));
  }

  async heartbeat(): Promise<void> {
    await this.guard('heartbeat', () => this.client.heartbeat());
  }

  private async guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, `Chroma ${operation} failed`, { operation }, { cause: err });
    }
  }
}
