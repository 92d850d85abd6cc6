import type { ChromaAccess } from '../../config/connections';
import type { EpisodeVectorIndex, EpisodeVectorItem } from '../../core/episodes/ports';
import type { VectorHit } from '../../core/ports/memory';
import { chromaClient, MAX_COLLECTION_NAME, MAX_PREFIX, migrateSharedCollection, moveUserRecords, nearestOwned, upsertOwned, UserCollections, chromaCall } from './user-collections';

const SUFFIX = '_episodes';

/** Prefix of the per-user episode collections that go with a memory collection prefix. */
export function episodeCollectionName(memoryCollection: string): string {
  return `${memoryCollection.slice(0, MAX_PREFIX - SUFFIX.length)}${SUFFIX}`;
}

/**
 * Episode summaries in Chroma, one collection per user (`${CHROMA_COLLECTION}_episodes_u<hash>`,
 * for the same reason as the memory vectors), `user_id` on every record and checked on read.
 */
export class ChromaEpisodeIndex implements EpisodeVectorIndex {
  private constructor(private readonly users: UserCollections) {}

  /** Connects, and moves a pre-0.2 shared episode collection (if any) into per-user ones. */
  static async create(opts: { url: string; access?: ChromaAccess; memoryCollection: string }): Promise<ChromaEpisodeIndex> {
    const prefix = episodeCollectionName(opts.memoryCollection);
    const users = new UserCollections(chromaClient(opts.url, opts.access), prefix, 'episodes');
    // The shared layout named its collection with the full 63-character budget.
    await migrateSharedCollection(users, `${opts.memoryCollection.slice(0, MAX_COLLECTION_NAME - SUFFIX.length)}${SUFFIX}`);
    return new ChromaEpisodeIndex(users);
  }

  async upsert({ userId, items }: { userId: string; items: EpisodeVectorItem[] }): Promise<void> {
    await guard('upsert', () =>
      upsertOwned(this.users, userId, items.map((i) => ({ id: i.id, embedding: i.embedding, metadata: { conversation_id: i.conversationId, day: i.day } }))),
    );
  }

  async query({ userId, embedding, k }: { userId: string; embedding: number[]; k: number }): Promise<VectorHit[]> {
    return guard('query', () =>
      this.users.with(userId, { create: false, whenMissing: [] as VectorHit[] }, (collection) => nearestOwned(collection, userId, { embedding, k })),
    );
  }

  async remove({ userId, ids }: { userId: string; ids: string[] }): Promise<void> {
    if (ids.length === 0) return;
    await guard('remove', () => this.users.with(userId, { create: false, whenMissing: undefined }, (collection) => collection.delete({ ids, where: { user_id: userId } })));
  }
  /** Moves a user's vectors to their new key (see rekeyLegacyUsers). */
  async moveUser({ from, to }: { from: string; to: string }): Promise<number> {
    return moveUserRecords(this.users, from, to);
  }

  async dropUser(userId: string): Promise<boolean> {
    return guard('drop', () => this.users.drop(userId));
  }

  /** The Chroma collection that holds this user's episode vectors (for operators and tests). */
  collectionName(userId: string): string {
    return this.users.name(userId);
  }
}

function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  return chromaCall('episode', operation, fn);
}
