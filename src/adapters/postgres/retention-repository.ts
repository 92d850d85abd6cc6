import type { ConversationRef, RetentionKey, RetentionPage, RetentionRepository } from '../../core/ports/privacy';
import type { Queryable } from './pool';

/**
 * Set-based retention deletes across all users, one keyset page per call (the caller's
 * transaction). A page takes the oldest rows past the cutoff after the previous page's last key,
 * skipping rows a writer holds (`FOR UPDATE SKIP LOCKED`: the sweep never waits for the chat path;
 * what it skips goes tomorrow). Every page is idempotent: what is gone is not found again.
 */

const START_TIME = '-infinity';

export class PostgresRetentionRepository implements RetentionRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Deletes messages said before `cutoff` with their BM25 postings; the postings' delete trigger
   * keeps each user's message statistics exact. Returns the conversations touched, for
   * {@link RetentionRepository.dropEmptyConversations}.
   */
  async messagesPage(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<RetentionPage & { postings: number; conversations: ConversationRef[]; messages: (ConversationRef & { messageId: string })[] }> {
    const { rows } = await this.db.query(
      `WITH due AS MATERIALIZED (
         SELECT user_id, conversation_id, message_id, said_at, seq FROM messages
          WHERE said_at < $1 AND (said_at, seq) > ($2::timestamptz, $3::bigint)
          ORDER BY said_at, seq LIMIT $4
            FOR UPDATE SKIP LOCKED
       ),
       gone AS (
         DELETE FROM messages m USING due d
          WHERE m.user_id = d.user_id AND m.conversation_id = d.conversation_id AND m.message_id = d.message_id
         RETURNING 1
       ),
       unposted AS (
         DELETE FROM message_terms t USING due d
          WHERE t.user_id = d.user_id AND t.conversation_id = d.conversation_id AND t.message_id = d.message_id
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM due)::int AS scanned,
              (SELECT count(*) FROM gone)::int AS deleted,
              (SELECT count(*) FROM unposted)::int AS postings,
              (SELECT json_build_array(said_at, seq::text) FROM due ORDER BY said_at DESC, seq DESC LIMIT 1) AS last,
              COALESCE((SELECT json_agg(DISTINCT jsonb_build_object('userId', user_id, 'conversationId', conversation_id)) FROM due), '[]'::json) AS conversations,
              COALESCE((SELECT json_agg(json_build_object('userId', user_id, 'conversationId', conversation_id, 'messageId', message_id)) FROM due), '[]'::json) AS messages`,
      [input.cutoff, input.after?.[0] ?? START_TIME, input.after?.[1] ?? '0', input.limit],
    );
    const r = rows[0]!;
    return { scanned: r.scanned, deleted: r.deleted, postings: r.postings, last: r.last, conversations: r.conversations, messages: r.messages };
  }

  /** Episodes that ended before `cutoff`, locked (a writer's are skipped) for the caller to delete their vectors first. */
  async lockEpisodes(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<(ConversationRef & { id: string; endedAt: string })[]> {
    const { rows } = await this.db.query(
      `SELECT id, user_id, conversation_id, ended_at::text AS ended_at FROM episodes
        WHERE ended_at < $1 AND (ended_at, id) > ($2::timestamptz, $3::uuid)
        ORDER BY ended_at, id LIMIT $4
          FOR UPDATE SKIP LOCKED`,
      [input.cutoff, input.after?.[0] ?? START_TIME, input.after?.[1] ?? '00000000-0000-0000-0000-000000000000', input.limit],
    );
    return rows.map((r) => ({ id: r.id, userId: r.user_id, conversationId: r.conversation_id, endedAt: r.ended_at }));
  }

  /** Deletes locked episodes (postings cascade) and takes them out of each user's BM25 statistics. */
  async deleteEpisodes({ ids }: { ids: string[] }): Promise<number> {
    if (ids.length === 0) return 0;
    const { rows } = await this.db.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM episodes e USING unnest($1::uuid[]) AS x(id) WHERE e.id = x.id RETURNING e.user_id, e.doc_length
       ),
       restat AS (
         UPDATE episode_index_stats s
            SET doc_count = GREATEST(s.doc_count - a.n, 0), total_length = GREATEST(s.total_length - a.len, 0)
           FROM (SELECT user_id, count(*)::int AS n, COALESCE(sum(doc_length), 0)::bigint AS len FROM gone GROUP BY user_id) a
          WHERE s.user_id = a.user_id
         RETURNING 1
       )
       SELECT count(*)::int AS n FROM gone`,
      [ids],
    );
    return rows[0]!.n;
  }

  /**
   * Deletes the given conversations once nothing of them is left (no message, no episode) and
   * their last message is older than `cutoff`; a conversation a writer holds is left alone.
   */
  async dropEmptyConversations(input: { conversations: ConversationRef[]; cutoff: Date }): Promise<number> {
    if (input.conversations.length === 0) return 0;
    const { rowCount } = await this.db.query(
      `DELETE FROM conversations c WHERE (c.user_id, c.conversation_id) IN (
         SELECT c2.user_id, c2.conversation_id FROM conversations c2
           JOIN unnest($1::text[], $2::text[]) AS x(u, cid) ON c2.user_id = x.u AND c2.conversation_id = x.cid
          WHERE c2.last_message_at < $3
            AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.user_id = c2.user_id AND m.conversation_id = c2.conversation_id)
            AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.user_id = c2.user_id AND e.conversation_id = c2.conversation_id)
            FOR UPDATE OF c2 SKIP LOCKED)`,
      [input.conversations.map((x) => x.userId), input.conversations.map((x) => x.conversationId), input.cutoff],
    );
    return rowCount ?? 0;
  }

  async notificationsPage(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<RetentionPage> {
    const { rows } = await this.db.query(
      `-- all-users: retention deletes by age across every user, by design
       WITH due AS MATERIALIZED (
         SELECT id, created_at FROM notifications
          WHERE created_at < $1 AND (created_at, id) > ($2::timestamptz, $3::uuid)
          ORDER BY created_at, id LIMIT $4
            FOR UPDATE SKIP LOCKED
       ),
       gone AS (DELETE FROM notifications n USING due WHERE n.id = due.id RETURNING 1)
       SELECT (SELECT count(*) FROM due)::int AS scanned, (SELECT count(*) FROM gone)::int AS deleted,
              (SELECT json_build_array(created_at, id) FROM due ORDER BY created_at DESC, id DESC LIMIT 1) AS last`,
      [input.cutoff, input.after?.[0] ?? START_TIME, input.after?.[1] ?? '00000000-0000-0000-0000-000000000000', input.limit],
    );
    const r = rows[0]!;
    return { scanned: r.scanned, deleted: r.deleted, last: r.last };
  }

  /** Digests of local days before the cutoff's (UTC) date. */
  async digestsPage(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<RetentionPage> {
    const { rows } = await this.db.query(
      `WITH due AS MATERIALIZED (
         SELECT user_id, digest_date FROM digests
          WHERE digest_date < ($1::timestamptz AT TIME ZONE 'UTC')::date AND (digest_date, user_id) > ($2::date, $3::text)
          ORDER BY digest_date, user_id LIMIT $4
            FOR UPDATE SKIP LOCKED
       ),
       gone AS (DELETE FROM digests d USING due WHERE d.user_id = due.user_id AND d.digest_date = due.digest_date RETURNING 1)
       SELECT (SELECT count(*) FROM due)::int AS scanned, (SELECT count(*) FROM gone)::int AS deleted,
              (SELECT json_build_array(to_char(digest_date, 'YYYY-MM-DD'), user_id) FROM due ORDER BY digest_date DESC, user_id DESC LIMIT 1) AS last`,
      [input.cutoff, input.after?.[0] ?? START_TIME, input.after?.[1] ?? '', input.limit],
    );
    const r = rows[0]!;
    return { scanned: r.scanned, deleted: r.deleted, last: r.last };
  }
}
