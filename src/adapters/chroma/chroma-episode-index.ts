import { ChromaClient, type Collection } from 'chromadb';
import type { EpisodeVectorIndex, EpisodeVectorItem } from '../../core/episodes/ports';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import type { VectorHit } from '../../core/ports';

/** Chroma limits collection names to 63 characters. */
const MAX_COLLECTION_NAME = 63;
const SUFFIX = '_episodes';

/** Name of the episode collection that goes with a memory collection. */
export function episodeCollectionName(memoryCollection: string): string {
  return `${memoryCollection.slice(0, MAX_COLLECTION_NAME - SUFFIX.length)}${SUFFIX}`;
}

/**
 * Episode summaries in Chroma (`${CHROMA_COLLECTION}_episodes`), `user_id` in every record's
 * metadata and in every filter.
 */
export class ChromaEpisodeIndex implements EpisodeVectorIndex {
  private constructor(private readonly collection: Collection) {}

  /** Connects and creates the collection (cosine space, embeddings supplied by us) if missing. */
  static async create(opts: { url: string; memoryCollection: string }): Promise<ChromaEpisodeIndex> {
    const url = new URL(opts.url);
    const client = new ChromaClient({
      host: url.hostname,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      ssl: url.protocol === 'https:',
    });
    const collection = await client.getOrCreateCollection({
      name: episodeCollectionName(opts.memoryCollection),
      embeddingFunction: null,
      configuration: { hnsw: { space: 'cosine' } },
    });
    return new ChromaEpisodeIndex(collection);
  }

  async upsert({ userId, items }: { userId: string; items: EpisodeVectorItem[] }): Promise<void> {
    if (items.length === 0) return;
    await guard('upsert', () =>
      this.collection.upsert({
        ids: items.map((i) => i.id),
        embeddings: items.map((i) => i.embedding),
        metadatas: items.map((i) => ({ user_id: userId, conversation_id: i.conversationId, day: i.day })),
      }),
    );
  }

  async query({ userId, embedding, k }: { userId: string; embedding: number[]; k: number }): Promise<VectorHit[]> {
    const result = await guard('query', () =>
      this.collection.query({ queryEmbeddings: [embedding], nResults: k, where: { user_id: userId }, include: ['distances'] }),
    );
    const ids = result.ids[0] ?? [];
    const distances = result.distances?.[0] ?? [];
    return ids.map((id, i) => ({ id, similarity: 1 - (distances[i] ?? 1) }));
  }

  async remove({ userId, ids }: { userId: string; ids: string[] }): Promise<void> {
    if (ids.length === 0) return;
    await guard('remove', () => this.collection.delete({ ids, where: { user_id: userId } }));
  }
}

async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, `Chroma episode ${operation} failed`, { operation }, { cause: err });
  }
}
