import type { EntityLines, ExchangeIndexWatermarks } from '../../core/ports/recall';
import { canonicalEntity, NOT_A_SEED } from '../../core/recall/graph';
import type { StoredLine } from '../../core/recall/exchanges';
import type { Queryable } from './pool';

/**
 * The exchange watermark (`conversations.exchanges_indexed_seq`, migration 1796500000000): every
 * message of the conversation with seq <= it is in the exchange index.
 */
export class PostgresExchangeIndexWatermarks implements ExchangeIndexWatermarks {
  constructor(private readonly db: Queryable) {}

  /**
   * Users interleaved (each one's first conversation, then each one's second, …) and the smallest
   * backlogs first, so the limit never fills with one user's conversations and a short new
   * conversation is not read after a long backfill.
   */
  async owed({ limit }: { limit: number }): Promise<{ userId: string; conversationId: string; indexedSeq: number; linkedSeq: number }[]> {
    const { rows } = await this.db.query<{ user_id: string; conversation_id: string; exchanges_indexed_seq: string; entities_linked_seq: string }>(
      `-- all-users: the exchange indexer looks for conversations of every user with unindexed messages or unlinked lines
       SELECT user_id, conversation_id, exchanges_indexed_seq, entities_linked_seq FROM (
         SELECT user_id, conversation_id, exchanges_indexed_seq, entities_linked_seq, last_received_at, last_seq - exchanges_indexed_seq AS backlog,
                row_number() OVER (PARTITION BY user_id ORDER BY last_seq - exchanges_indexed_seq, last_received_at NULLS FIRST, conversation_id) AS turn
           FROM conversations
          WHERE last_seq > exchanges_indexed_seq OR entities_linked_seq < exchanges_indexed_seq
       ) owed
        ORDER BY turn, backlog, last_received_at NULLS FIRST, user_id, conversation_id
        LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({
      userId: r.user_id,
      conversationId: r.conversation_id,
      indexedSeq: Number(r.exchanges_indexed_seq),
      linkedSeq: Number(r.entities_linked_seq),
    }));
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
      `UPDATE conversations SET exchanges_indexed_seq = GREATEST(exchanges_indexed_seq, $3), entities_linked_seq = GREATEST(entities_linked_seq, $3)
        WHERE user_id = $1 AND conversation_id = $2`,
      [userId, conversationId, seq],
    );
  }

  async advanceLinks({ userId, conversationId, seq }: { userId: string; conversationId: string; seq: number }): Promise<void> {
    await this.db.query('UPDATE conversations SET entities_linked_seq = GREATEST(entities_linked_seq, $3) WHERE user_id = $1 AND conversation_id = $2', [
      userId,
      conversationId,
      seq,
    ]);
  }

  /**
   * One statement per batch: every (line, canonical key) pair, the message's own row checked by
   * the foreign key (a line erased meanwhile fails the batch, and the indexer retries it).
   */
  async linkEntities({ userId, conversationId, lines }: { userId: string; conversationId: string; lines: readonly { messageId: string; at: Date; names: readonly string[] }[] }): Promise<number> {
    const pairs = new Map<string, { messageId: string; at: Date; key: string }>();
    for (const l of lines) {
      for (const name of l.names) {
        const key = canonicalEntity(name);
        if (key.length < 2 || NOT_A_SEED.has(key)) continue;
        pairs.set(`${l.messageId}\u0000${key}`, { messageId: l.messageId, at: l.at, key });
      }
    }
    if (pairs.size === 0) return 0;
    const list = [...pairs.values()];
    const { rowCount } = await this.db.query(
      `INSERT INTO exchange_entities (user_id, entity_key, conversation_id, message_id, said_at)
       SELECT $1, s.key, $2, s.mid, s.at FROM unnest($3::text[], $4::text[], $5::timestamptz[]) AS s(key, mid, at)
       ON CONFLICT DO NOTHING`,
      [userId, conversationId, list.map((p) => p.key), list.map((p) => p.messageId), list.map((p) => p.at)],
    );
    return rowCount ?? 0;
  }

  /**
   * Per key, one index descent on the primary key (user_id, entity_key, …): the count stops at
   * `countCap` and the lines at `perKey` (latest first), so a key every line names costs what a
   * rare one does; each line's keys come from the line index, and only for a key that is no hub
   * (`keysUpTo`: a one-time filter, so a hub's thousand lines cost no lookup each). Lateral per key for the reason
   * entitiesByKey gives: `= ANY` lets the planner scan the user's whole range.
   */
  async entityLines({ userId, keys, perKey, countCap, keysUpTo }: { userId: string; keys: readonly string[]; perKey: number; countCap: number; keysUpTo: number }): Promise<EntityLines[]> {
    if (keys.length === 0) return [];
    const { rows } = await this.db.query<{ key: string; n: number; conversation_id: string | null; message_id: string | null; keys: string[] | null }>(
      `SELECT k.key, c.n, m.conversation_id, m.message_id, l.keys
         FROM unnest($2::text[]) AS k(key)
         CROSS JOIN LATERAL (
           SELECT count(*)::int AS n FROM (SELECT 1 FROM exchange_entities x WHERE x.user_id = $1 AND x.entity_key = k.key LIMIT $4) c
         ) c
         LEFT JOIN LATERAL (
           SELECT x.conversation_id, x.message_id FROM exchange_entities x
            WHERE x.user_id = $1 AND x.entity_key = k.key
            ORDER BY x.said_at DESC, x.conversation_id, x.message_id LIMIT $3
         ) m ON true
         LEFT JOIN LATERAL (
           SELECT array_agg(y.entity_key ORDER BY y.entity_key) AS keys FROM exchange_entities y
            WHERE c.n <= $5 AND y.user_id = $1 AND y.conversation_id = m.conversation_id AND y.message_id = m.message_id
         ) l ON true
        WHERE c.n > 0`,
      [userId, [...new Set(keys)], perKey, countCap, keysUpTo],
    );
    const byKey = new Map<string, EntityLines>();
    for (const r of rows) {
      const e = byKey.get(r.key) ?? { key: r.key, lines: r.n, found: [] };
      if (r.conversation_id !== null && r.message_id !== null) e.found.push({ conversationId: r.conversation_id, messageId: r.message_id, keys: r.keys ?? [] });
      byKey.set(r.key, e);
    }
    return [...byKey.values()];
  }
}
