import type { ExtractionMark, ExtractionRunRepository, PageClaim, PageKey, StaleConversation } from '../../core/ports/conversation';
import type { Queryable } from './pool';

export type { ExtractionMark, PageClaim, PageKey, StaleConversation };


/**
 * The extraction watermark of each conversation (migrations/1796400000000_…): which messages have
 * been extracted, and the leased cache of extractor output per page. Per-user statements name the
 * user; the reconciler's scan over every user says so.
 */
export class PostgresExtractionRunRepository implements ExtractionRunRepository {
  constructor(private readonly q: Queryable) {}

  async mark({ userId, conversationId }: { userId: string; conversationId: string }): Promise<ExtractionMark | undefined> {
    const { rows } = await this.q.query<{ extracted_seq: string; last_seq: string }>(
      'SELECT extracted_seq, last_seq FROM conversations WHERE user_id = $1 AND conversation_id = $2',
      [userId, conversationId],
    );
    return rows[0] ? { extractedSeq: Number(rows[0].extracted_seq), lastSeq: Number(rows[0].last_seq) } : undefined;
  }

  /** Runs inside the transaction of a page's last decision, or at the end of a run. */
  async advance({ userId, conversationId, seq, ended }: { userId: string; conversationId: string; seq: number; ended?: boolean }): Promise<void> {
    await this.q.query(
      `UPDATE conversations SET extracted_seq = GREATEST(extracted_seq, $3), extracted_at = now(), ended_at = CASE WHEN $4 THEN now() ELSE ended_at END
        WHERE user_id = $1 AND conversation_id = $2`,
      [userId, conversationId, seq, ended === true],
    );
    await this.q.query('DELETE FROM extraction_pages WHERE user_id = $1 AND conversation_id = $2 AND to_seq <= $3', [userId, conversationId, seq]);
  }

  async claimStale(input: { idleSeconds: number; limit: number }): Promise<StaleConversation[]> {
    const { rows } = await this.q.query<{ user_id: string; conversation_id: string }>(
      `-- all-users: the extraction reconciler looks for idle, unextracted conversations of every user
       WITH stale AS (
         SELECT user_id, conversation_id FROM conversations
          WHERE last_seq > extracted_seq
            AND (last_received_at < now() - make_interval(secs => $1) OR end_requested_at >= last_received_at)
          ORDER BY reconciled_at NULLS FIRST, last_received_at
          LIMIT $2
          FOR UPDATE SKIP LOCKED
       )
       UPDATE conversations c SET reconciled_at = now() FROM stale
        WHERE c.user_id = stale.user_id AND c.conversation_id = stale.conversation_id
       RETURNING c.user_id, c.conversation_id`,
      [input.idleSeconds, input.limit],
    );
    return rows.map((r) => ({ userId: r.user_id, conversationId: r.conversation_id }));
  }

  async requestEnd({ userId, conversationId }: { userId: string; conversationId: string }): Promise<boolean> {
    const { rowCount } = await this.q.query('UPDATE conversations SET end_requested_at = clock_timestamp() WHERE user_id = $1 AND conversation_id = $2', [userId, conversationId]);
    return (rowCount ?? 0) > 0;
  }

  async claimPage({ key, attemptId, leaseMs }: { key: PageKey; attemptId: string; leaseMs: number }): Promise<PageClaim> {
    const args = [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant];
    const claimed = await this.q.query(
      `INSERT INTO extraction_pages (user_id, conversation_id, from_seq, to_seq, variant, attempt_id, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp() + make_interval(secs => $7::float8 / 1000))
       ON CONFLICT (user_id, conversation_id, from_seq, to_seq, variant) DO UPDATE
         SET attempt_id = EXCLUDED.attempt_id, lease_until = EXCLUDED.lease_until
         WHERE extraction_pages.output IS NULL
           AND (extraction_pages.lease_until IS NULL OR extraction_pages.lease_until < clock_timestamp() OR extraction_pages.attempt_id = EXCLUDED.attempt_id)
       RETURNING 1`,
      [...args, attemptId, leaseMs],
    );
    if ((claimed.rowCount ?? 0) > 0) return { state: 'mine' };
    const { rows } = await this.q.query<{ output: unknown; lease_until: Date | null }>(
      'SELECT output, lease_until FROM extraction_pages WHERE user_id = $1 AND conversation_id = $2 AND from_seq = $3 AND to_seq = $4 AND variant = $5',
      args,
    );
    const row = rows[0];
    if (!row) return this.claimPage({ key, attemptId, leaseMs }); // cleared meanwhile: claim afresh
    if (row.output !== null) return { state: 'done', output: row.output };
    return { state: 'busy', leaseUntil: row.lease_until ?? new Date() };
  }

  async renewLease({ key, attemptId, leaseMs }: { key: PageKey; attemptId: string; leaseMs: number }): Promise<void> {
    await this.q.query(
      `UPDATE extraction_pages SET lease_until = clock_timestamp() + make_interval(secs => $7::float8 / 1000)
        WHERE user_id = $1 AND conversation_id = $2 AND from_seq = $3 AND to_seq = $4 AND variant = $5 AND attempt_id = $6 AND output IS NULL`,
      [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant, attemptId, leaseMs],
    );
  }

  async releaseLease({ key, attemptId }: { key: PageKey; attemptId: string }): Promise<void> {
    await this.q.query(
      `UPDATE extraction_pages SET lease_until = NULL
        WHERE user_id = $1 AND conversation_id = $2 AND from_seq = $3 AND to_seq = $4 AND variant = $5 AND attempt_id = $6 AND output IS NULL`,
      [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant, attemptId],
    );
  }

  async savePage({ key, output }: { key: PageKey; output: unknown }): Promise<unknown> {
    const { rows } = await this.q.query<{ output: unknown }>(
      `INSERT INTO extraction_pages (user_id, conversation_id, from_seq, to_seq, variant, output)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT (user_id, conversation_id, from_seq, to_seq, variant) DO UPDATE
         SET output = COALESCE(extraction_pages.output, EXCLUDED.output), lease_until = NULL
       RETURNING output`,
      [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant, JSON.stringify(output)],
    );
    return rows[0]!.output;
  }
}
