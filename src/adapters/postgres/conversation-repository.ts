import type pg from 'pg';
import type { ConversationMessage, MessageRole } from '../../core/types';
import { termFrequencies } from '../../core/text/tokenize';
import { tokenizeForIndex } from '../text/jieba';
import type { Queryable } from './pool';

export interface IncomingMessage {
  id: string;
  role: MessageRole;
  content: string;
  at: Date;
  truncated: boolean;
}

export interface StoredMessage extends ConversationMessage {
  seq: number;
  conversationId: string;
}

/** Raw messages, kept for provenance and conversation search; always scoped by user. */
export const conversationStore = {
  /** Appends messages; a message id seen before is skipped, which makes the call idempotent. */
  async append(c: pg.PoolClient, userId: string, conversationId: string, messages: IncomingMessage[]): Promise<{ inserted: string[]; duplicates: string[] }> {
    if (messages.length === 0) return { inserted: [], duplicates: [] };
    const first = messages.reduce((a, m) => (m.at < a ? m.at : a), messages[0]!.at);
    const last = messages.reduce((a, m) => (m.at > a ? m.at : a), messages[0]!.at);
    await c.query(
      `INSERT INTO conversations (user_id, conversation_id, started_at, last_message_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id, conversation_id) DO UPDATE
         SET started_at = LEAST(conversations.started_at, EXCLUDED.started_at),
             last_message_at = GREATEST(conversations.last_message_at, EXCLUDED.last_message_at)`,
      [userId, conversationId, first, last],
    );
    const { rows } = await c.query<{ message_id: string }>(
      `INSERT INTO messages (user_id, conversation_id, message_id, role, content, said_at, truncated)
       SELECT $1, $2, id, role, content, at, truncated
         FROM unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::boolean[]) AS x(id, role, content, at, truncated)
       ON CONFLICT DO NOTHING
       RETURNING message_id`,
      [userId, conversationId, messages.map((m) => m.id), messages.map((m) => m.role), messages.map((m) => m.content), messages.map((m) => m.at), messages.map((m) => m.truncated)],
    );
    const inserted = new Set(rows.map((r) => r.message_id));
    const terms: { term: string; id: string; tf: number }[] = [];
    for (const m of messages) {
      if (!inserted.has(m.id)) continue;
      for (const [term, tf] of termFrequencies(tokenizeForIndex(m.content))) terms.push({ term, id: m.id, tf });
    }
    if (terms.length > 0) {
      await c.query(
        `INSERT INTO message_terms (user_id, term, conversation_id, message_id, tf)
         SELECT $1, t, $2, id, tf FROM unnest($3::text[], $4::text[], $5::int[]) AS x(t, id, tf)
         ON CONFLICT DO NOTHING`,
        [userId, conversationId, terms.map((t) => t.term), terms.map((t) => t.id), terms.map((t) => t.tf)],
      );
    }
    return { inserted: [...inserted], duplicates: messages.filter((m) => !inserted.has(m.id)).map((m) => m.id) };
  },

  /** A page of a conversation's messages in arrival order, after `afterSeq`. */
  async page(q: Queryable, userId: string, conversationId: string, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    const { rows } = await q.query(
      `SELECT seq, conversation_id, message_id, role, content, said_at FROM messages
        WHERE user_id = $1 AND conversation_id = $2 AND seq > $3
        ORDER BY seq LIMIT $4`,
      [userId, conversationId, afterSeq, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), conversationId: r.conversation_id, id: r.message_id, role: r.role, content: r.content, at: r.said_at }));
  },

  async exists(q: Queryable, userId: string, conversationId: string): Promise<boolean> {
    const { rowCount } = await q.query('SELECT 1 FROM conversations WHERE user_id = $1 AND conversation_id = $2', [userId, conversationId]);
    return (rowCount ?? 0) > 0;
  },

  async markExtracted(q: Queryable, userId: string, conversationId: string): Promise<void> {
    await q.query('UPDATE conversations SET ended_at = now() WHERE user_id = $1 AND conversation_id = $2', [userId, conversationId]);
  },
};
