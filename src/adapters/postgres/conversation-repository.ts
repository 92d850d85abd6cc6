import type { ConversationRepository, DayMessage, IncomingMessage, IndexedMessage, StoredMessage } from '../../core/ports/conversation';
import { longQuery, type Queryable } from './pool';

export type { IncomingMessage, StoredMessage };

/** Raw messages in PostgreSQL (`conversations`, `messages` and their BM25 postings `message_terms`). */
export class PostgresConversationRepository implements ConversationRepository {
  constructor(private readonly q: Queryable) {}

  async append({ userId, conversationId, messages }: { userId: string; conversationId: string; messages: IndexedMessage[] }): Promise<{ inserted: string[]; duplicates: string[] }> {
    if (messages.length === 0) return { inserted: [], duplicates: [] };
    const first = messages.reduce((a, m) => (m.at < a ? m.at : a), messages[0]!.at);
    const last = messages.reduce((a, m) => (m.at > a ? m.at : a), messages[0]!.at);
    await this.q.query(
      `INSERT INTO conversations (user_id, conversation_id, started_at, last_message_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id, conversation_id) DO UPDATE
         SET started_at = LEAST(conversations.started_at, EXCLUDED.started_at),
             last_message_at = GREATEST(conversations.last_message_at, EXCLUDED.last_message_at)`,
      [userId, conversationId, first, last],
    );
    const { rows } = await this.q.query<{ message_id: string }>(
      `INSERT INTO messages (user_id, conversation_id, message_id, role, content, said_at, truncated)
       SELECT $1, $2, id, role, content, at, truncated
         FROM unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::boolean[]) AS x(id, role, content, at, truncated)
       ON CONFLICT DO NOTHING
       RETURNING message_id`,
      [userId, conversationId, messages.map((m) => m.id), messages.map((m) => m.role), messages.map((m) => m.content), messages.map((m) => m.at), messages.map((m) => m.truncated)],
    );
    const inserted = new Set(rows.map((r) => r.message_id));
    // Postings of the messages stored now; a duplicate's were computed with the batch and are dropped.
    const terms: string[] = [];
    const ids: string[] = [];
    const tfs: number[] = [];
    const docLengths: number[] = [];
    for (const m of messages) {
      if (!inserted.has(m.id)) continue;
      const { postings } = m;
      for (let i = 0; i < postings.terms.length; i++) {
        terms.push(postings.terms[i]!);
        ids.push(m.id);
        tfs.push(postings.tfs[i]!);
        docLengths.push(postings.docLength);
      }
    }
    if (terms.length > 0) {
      await this.q.query(
        `INSERT INTO message_terms (user_id, term, conversation_id, message_id, tf, doc_length)
         SELECT $1, t, $2, id, tf, dl FROM unnest($3::text[], $4::text[], $5::int[], $6::int[]) AS x(t, id, tf, dl)
         ON CONFLICT DO NOTHING`,
        [userId, conversationId, terms, ids, tfs, docLengths],
      );
    }
    return { inserted: [...inserted], duplicates: messages.filter((m) => !inserted.has(m.id)).map((m) => m.id) };
  }

  async lockForAppend({ userId, conversationId, ids }: { userId: string; conversationId: string; ids: string[] }): Promise<{ total: number; known: number }> {
    // Held by another append to this conversation until it commits: a long statement (pool.ts).
    await longQuery(this.q, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [`${userId}/${conversationId}`]);
    const { rows } = await this.q.query<{ n: string; known: string }>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE message_id = ANY($3::text[])) AS known
         FROM messages WHERE user_id = $1 AND conversation_id = $2`,
      [userId, conversationId, ids],
    );
    return { total: Number(rows[0]!.n), known: Number(rows[0]!.known) };
  }

  async stored({ userId, conversationId, ids }: { userId: string; conversationId: string; ids: string[] }): Promise<{ id: string; role: 'user' | 'assistant'; content: string }[]> {
    const { rows } = await this.q.query<{ message_id: string; role: 'user' | 'assistant'; content: string }>(
      'SELECT message_id, role, content FROM messages WHERE user_id = $1 AND conversation_id = $2 AND message_id = ANY($3::text[])',
      [userId, conversationId, ids],
    );
    return rows.map((r) => ({ id: r.message_id, role: r.role, content: r.content }));
  }

  async page({ userId, conversationId, afterSeq, limit }: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<StoredMessage[]> {
    const { rows } = await this.q.query(
      `SELECT seq, conversation_id, message_id, role, content, said_at FROM messages
        WHERE user_id = $1 AND conversation_id = $2 AND seq > $3
        ORDER BY seq LIMIT $4`,
      [userId, conversationId, afterSeq, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), conversationId: r.conversation_id, id: r.message_id, role: r.role, content: r.content, at: r.said_at }));
  }

  async lastUpTo({ userId, conversationId, seq }: { userId: string; conversationId: string; seq: number }): Promise<StoredMessage | undefined> {
    const { rows } = await this.q.query(
      `SELECT seq, conversation_id, message_id, role, content, said_at FROM messages
        WHERE user_id = $1 AND conversation_id = $2 AND seq <= $3
        ORDER BY seq DESC LIMIT 1`,
      [userId, conversationId, seq],
    );
    const r = rows[0];
    return r ? { seq: Number(r.seq), conversationId: r.conversation_id, id: r.message_id, role: r.role, content: r.content, at: r.said_at } : undefined;
  }

  async exists({ userId, conversationId }: { userId: string; conversationId: string }): Promise<boolean> {
    const { rowCount } = await this.q.query('SELECT 1 FROM conversations WHERE user_id = $1 AND conversation_id = $2', [userId, conversationId]);
    return (rowCount ?? 0) > 0;
  }

  async markEnded({ userId, conversationId }: { userId: string; conversationId: string }): Promise<void> {
    await this.q.query('UPDATE conversations SET ended_at = now() WHERE user_id = $1 AND conversation_id = $2', [userId, conversationId]);
  }

  async messagesBetween({ userId, from, to, limit = 1000 }: { userId: string; from: Date; to: Date; limit?: number }): Promise<DayMessage[]> {
    const { rows } = await this.q.query(
      `SELECT conversation_id, role, content, said_at FROM messages
        WHERE user_id = $1 AND said_at >= $2 AND said_at < $3 ORDER BY said_at, seq LIMIT $4`,
      [userId, from, to, limit],
    );
    return rows.map((r) => ({ conversationId: r.conversation_id, role: r.role, content: r.content, at: r.said_at }));
  }
}
