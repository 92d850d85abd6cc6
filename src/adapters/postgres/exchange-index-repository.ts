import type { ExchangeIndexWatermarks } from '../../core/ports/recall';
import type { StoredLine } from '../../core/recall/exchanges';
import type { Queryable } from './pool';

/**
 * The exchange watermark (`conversations.exchanges_indexed_seq`, migration 1796500000000): every
 * message of the conversation with seq <= it is in the exchange index.
 */
export class PostgresExchangeIndexWatermarks implements ExchangeIndexWatermarks {
  constructor(private readonly db: Queryable) {}

  async owed({ limit }: { limit: number }): Promise<{ userId: string; conversationId: string; indexedSeq: number }[]> {
    const { rows } = await this.db.query<{ user_id: string; conversation_id: string; exchanges_indexed_seq: string }>(
      `-- all-users: the exchange indexer looks for conversations of every user with unindexed messages
       SELECT user_id, conversation_id, exchanges_indexed_seq FROM conversations
        WHERE last_seq > exchanges_indexed_seq
        ORDER BY last_received_at NULLS FIRST, user_id, conversation_id
        LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ userId: r.user_id, conversationId: r.conversation_id, indexedSeq: Number(r.exchanges_indexed_seq) }));
  }

  async linesAfter({ userId, conversationId, afterSeq, limit }: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<StoredLine[]> {
    const { rows } = await this.db.query<{ message_id: string; seq: string; role: StoredLine['role']; content: string; said_at: Date }>(
      `(SELECT message_id, seq, role, content, said_at FROM messages
         WHERE user_id = $1 AND conversation_id = $2 AND seq <= $3 ORDER BY seq DESC LIMIT 1)
       UNION ALL
       (SELECT message_id, seq, role, content, said_at FROM messages
         WHERE user_id = $1 AND conversation_id = $2 AND seq > $3 ORDER BY seq LIMIT $4)
       ORDER BY seq`,
      [userId, conversationId, afterSeq, limit],
    );
    return rows.map((r) => ({ conversationId, messageId: r.message_id, seq: Number(r.seq), role: r.role, content: r.content, at: r.said_at }));
  }

  async advance({ userId, conversationId, seq }: { userId: string; conversationId: string; seq: number }): Promise<void> {
    await this.db.query(
      'UPDATE conversations SET exchanges_indexed_seq = GREATEST(exchanges_indexed_seq, $3) WHERE user_id = $1 AND conversation_id = $2',
      [userId, conversationId, seq],
    );
  }
}
