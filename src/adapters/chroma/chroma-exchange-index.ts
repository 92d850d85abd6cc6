import type { ExchangeVectorHit, ExchangeVectorIndex, ExchangeVectorItem, ExchangeVectorUnit } from '../../core/ports';
import { chromaCall, chromaClient, MAX_PREFIX, nearestOwnedRecords, upsertOwned, UserCollections } from './user-collections';

const SUFFIX = '_exchanges';

/** Prefix of the per-user exchange collections that go with a memory collection prefix. */
export function exchangeCollectionName(memoryCollection: string): string {
  return `${memoryCollection.slice(0, MAX_PREFIX - SUFFIX.length)}${SUFFIX}`;
}

/**
 * Raw exchanges (a user line and its reply) in Chroma, one collection per user
 * (`${CHROMA_COLLECTION}_exchanges_u<hash>`, for the same reason as the memory vectors), with
 * `user_id` on every record and checked on read. A record names the conversation and the message
 * that anchors its exchange; the search hydrates (and hides) from PostgreSQL, never from here.
 */
export class ChromaExchangeIndex implements ExchangeVectorIndex {
  private constructor(private readonly users: UserCollections) {}

  static create(opts: { url: string; memoryCollection: string }): ChromaExchangeIndex {
    return new ChromaExchangeIndex(new UserCollections(chromaClient(opts.url), exchangeCollectionName(opts.memoryCollection), 'exchanges'));
  }

  async upsert({ userId, items }: { userId: string; items: ExchangeVectorItem[] }): Promise<void> {
    await guard('upsert', () =>
      upsertOwned(this.users, userId, items.map((i) => ({ id: i.id, embedding: i.embedding, metadata: { conversation_id: i.conversationId, message_id: i.messageId, unit: i.unit } }))),
    );
  }

  async query({ userId, embedding, k, unit }: { userId: string; embedding: number[]; k: number; unit: ExchangeVectorUnit }): Promise<ExchangeVectorHit[]> {
    return guard('query', () =>
      this.users.with(userId, { create: false, whenMissing: [] as ExchangeVectorHit[] }, async (collection) =>
        (await nearestOwnedRecords(collection, userId, { embedding, k, where: { unit } })).flatMap(({ id, similarity, metadata }) =>
          typeof metadata.conversation_id === 'string' && typeof metadata.message_id === 'string'
            ? [{ id, similarity, conversationId: metadata.conversation_id, messageId: metadata.message_id, unit }]
            : [],
        ),
      ),
    );
  }

  async remove({ userId, ids }: { userId: string; ids: string[] }): Promise<void> {
    if (ids.length === 0) return;
    await guard('remove', () => this.users.with(userId, { create: false, whenMissing: undefined }, (collection) => collection.delete({ ids, where: { user_id: userId } })));
  }

  async dropUser(userId: string): Promise<boolean> {
    return guard('drop', () => this.users.drop(userId));
  }

  /** The Chroma collection that holds this user's exchange vectors (for operators and tests). */
  collectionName(userId: string): string {
    return this.users.name(userId);
  }
}

function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  return chromaCall('exchange', operation, fn);
}
