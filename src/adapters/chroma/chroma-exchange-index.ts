import type { ChromaAccess } from '../../config/connections';
import type { ExchangeVectorHit, ExchangeVectorIndex, ExchangeVectorItem, ExchangeVectorUnit } from '../../core/ports/recall';
import { chromaCall, chromaClient, MAX_PREFIX, nearestOwnedRecords, upsertOwned, UserCollections } from './user-collections';

const SUFFIX = '_exchanges';
const LINE_SUFFIX = '_exlines';

/** Prefix of the per-user exchange (pair) collections that go with a memory collection prefix. */
export function exchangeCollectionName(memoryCollection: string): string {
  return `${memoryCollection.slice(0, MAX_PREFIX - SUFFIX.length)}${SUFFIX}`;
}

/** Prefix of the per-user line collections that go with a memory collection prefix. */
export function lineCollectionName(memoryCollection: string): string {
  return `${memoryCollection.slice(0, MAX_PREFIX - LINE_SUFFIX.length)}${LINE_SUFFIX}`;
}

/**
 * Raw exchanges (a user line and its reply) in Chroma, one collection per user
 * (`${CHROMA_COLLECTION}_exchanges_u<hash>`, for the same reason as the memory vectors), with
 * `user_id` on every record and checked on read. A record names the conversation and the message
 * that anchors its exchange; the search hydrates (and hides) from PostgreSQL, never from here.
 * Single lines have a collection of their own (`…_exlines_u<hash>`): a unit filter inside one
 * collection would cost Chroma a scan before every search, as a user filter would.
 */
export class ChromaExchangeIndex implements ExchangeVectorIndex {
  private constructor(
    private readonly users: UserCollections,
    private readonly lines: UserCollections,
  ) {}

  static create(opts: { url: string; access?: ChromaAccess; memoryCollection: string }): ChromaExchangeIndex {
    const client = chromaClient(opts.url, opts.access);
    return new ChromaExchangeIndex(
      new UserCollections(client, exchangeCollectionName(opts.memoryCollection), 'exchanges'),
      new UserCollections(client, lineCollectionName(opts.memoryCollection), 'exchange_lines'),
    );
  }

  private of(unit: ExchangeVectorUnit): UserCollections {
    return unit === 'line' ? this.lines : this.users;
  }

  async upsert({ userId, items }: { userId: string; items: ExchangeVectorItem[] }): Promise<void> {
    await guard('upsert', async () => {
      for (const unit of ['pair', 'line'] as const) {
        const some = items.filter((i) => i.unit === unit);
        if (some.length === 0) continue;
        await upsertOwned(this.of(unit), userId, some.map((i) => ({ id: i.id, embedding: i.embedding, metadata: { conversation_id: i.conversationId, message_id: i.messageId, unit: i.unit } })));
      }
    });
  }

  async query({ userId, embedding, k, unit }: { userId: string; embedding: number[]; k: number; unit: ExchangeVectorUnit }): Promise<ExchangeVectorHit[]> {
    return guard('query', () =>
      this.of(unit).with(userId, { create: false, whenMissing: [] as ExchangeVectorHit[] }, async (collection) =>
        (await nearestOwnedRecords(collection, userId, { embedding, k })).flatMap(({ id, similarity, metadata }) =>
          typeof metadata.conversation_id === 'string' && typeof metadata.message_id === 'string'
            ? [{ id, similarity, conversationId: metadata.conversation_id, messageId: metadata.message_id, unit }]
            : [],
        ),
      ),
    );
  }

  async remove({ userId, ids }: { userId: string; ids: string[] }): Promise<void> {
    if (ids.length === 0) return;
    await guard('remove', async () => {
      for (const users of [this.users, this.lines]) await users.with(userId, { create: false, whenMissing: undefined }, (collection) => collection.delete({ ids, where: { user_id: userId } }));
    });
  }

  async dropUser(userId: string): Promise<boolean> {
    return guard('drop', async () => {
      const pairs = await this.users.drop(userId);
      const lines = await this.lines.drop(userId);
      return pairs || lines;
    });
  }

  /** The Chroma collection that holds this user's pair vectors (for operators and tests). */
  collectionName(userId: string): string {
    return this.users.name(userId);
  }

  /** The Chroma collection that holds this user's line vectors (for operators and tests). */
  lineCollectionName(userId: string): string {
    return this.lines.name(userId);
  }
}

function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  return chromaCall('exchange', operation, fn);
}
