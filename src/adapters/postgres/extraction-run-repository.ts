import type { Queryable } from './pool';

/** Where a conversation's extraction stands: done up to `extractedSeq`, newest message `lastSeq`. */
export interface ExtractionMark {
  extractedSeq: number;
  lastSeq: number;
}

export interface StaleConversation {
  userId: string;
  conversationId: string;
}

/** The outcome of asking for a page's extractor output. */
export type PageClaim = { state: 'mine' } | { state: 'done'; output: unknown } | { state: 'busy'; leaseUntil: Date };

export interface PageKey {
  userId: string;
  conversationId: string;
  fromSeq: number;
  toSeq: number;
  /** Extractor name and timezone: what else decides the output besides the messages. */
  variant: string;
}

/**
 * The extraction watermark of each conversation (migrations/1796400000000_…): which messages have
 * been extracted, and the leased cache of extractor output per page. Per-user statements name the
 * user; the reconciler's scan over every user says so.
 */
export const extractionRunStore = {
  /** The conversation's watermark and newest message; undefined when it has no messages at all. */
  async mark(q: Queryable, userId: string, conversationId: string): Promise<ExtractionMark | undefined> {
    const { rows } = await q.query<{ extracted_seq: string; last_seq: string }>(
      'SELECT extracted_seq, last_seq FROM conversations WHERE user_id = $1 AND conversation_id = $2',
      [userId, conversationId],
    );
    return rows[0] ? { extractedSeq: Number(rows[0].extracted_seq), lastSeq: Number(rows[0].last_seq) } : undefined;
  },

  /**
   * Moves the watermark forward to `seq` (never back) and drops the cached pages it passed. Runs
   * inside the transaction of a page's last decision, or at the end of a run.
   */
  async advance(q: Queryable, userId: string, conversationId: string, seq: number, opts: { ended?: boolean } = {}): Promise<void> {
    await q.query(
      `UPDATE conversations SET extracted_seq = GREATEST(extracted_seq, $3), extracted_at = now(), ended_at = CASE WHEN $4 THEN now() ELSE ended_at END
        WHERE user_id = $1 AND conversation_id = $2`,
      [userId, conversationId, seq, opts.ended === true],
    );
    await q.query('DELETE FROM extraction_pages WHERE user_id = $1 AND conversation_id = $2 AND to_seq <= $3', [userId, conversationId, seq]);
  },

  /**
   * Conversations with messages after their watermark whose newest message arrived more than
   * `idleSeconds` ago, or that an end call asked to extract while Temporal was unreachable (after
   * their newest message), least recently reconciled first; each one returned is stamped, so the
   * next tick moves on to others.
   */
  async claimStale(q: Queryable, input: { idleSeconds: number; limit: number }): Promise<StaleConversation[]> {
    const { rows } = await q.query<{ user_id: string; conversation_id: string }>(
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
  },

  /**
   * Records an end call that could not reach Temporal: the reconciler extracts the conversation on
   * its next tick, without waiting for the idle time. False when the conversation does not exist.
   */
  async requestEnd(q: Queryable, userId: string, conversationId: string): Promise<boolean> {
    const { rowCount } = await q.query('UPDATE conversations SET end_requested_at = clock_timestamp() WHERE user_id = $1 AND conversation_id = $2', [userId, conversationId]);
    return (rowCount ?? 0) > 0;
  },

  /**
   * Claims the page for `attemptId` (a lease of `leaseMs`), or reports that its output exists, or
   * that a live lease of another attempt holds it. An expired lease is taken over.
   */
  async claimPage(q: Queryable, key: PageKey, attemptId: string, leaseMs: number): Promise<PageClaim> {
    const args = [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant];
    const claimed = await q.query(
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
    const { rows } = await q.query<{ output: unknown; lease_until: Date | null }>(
      'SELECT output, lease_until FROM extraction_pages WHERE user_id = $1 AND conversation_id = $2 AND from_seq = $3 AND to_seq = $4 AND variant = $5',
      args,
    );
    const row = rows[0];
    if (!row) return this.claimPage(q, key, attemptId, leaseMs); // cleared meanwhile: claim afresh
    if (row.output !== null) return { state: 'done', output: row.output };
    return { state: 'busy', leaseUntil: row.lease_until ?? new Date() };
  },

  /** Extends this attempt's lease while its model call runs. */
  async renewLease(q: Queryable, key: PageKey, attemptId: string, leaseMs: number): Promise<void> {
    await q.query(
      `UPDATE extraction_pages SET lease_until = clock_timestamp() + make_interval(secs => $7::float8 / 1000)
        WHERE user_id = $1 AND conversation_id = $2 AND from_seq = $3 AND to_seq = $4 AND variant = $5 AND attempt_id = $6 AND output IS NULL`,
      [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant, attemptId, leaseMs],
    );
  },

  /** Gives the lease up (the call failed): the next attempt claims it at once. */
  async releaseLease(q: Queryable, key: PageKey, attemptId: string): Promise<void> {
    await q.query(
      `UPDATE extraction_pages SET lease_until = NULL
        WHERE user_id = $1 AND conversation_id = $2 AND from_seq = $3 AND to_seq = $4 AND variant = $5 AND attempt_id = $6 AND output IS NULL`,
      [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant, attemptId],
    );
  },

  /**
   * Stores the page's output unless one is already stored, and returns the stored one: every
   * attempt that got an answer ends up with the same candidates (the first answer wins).
   */
  async savePage(q: Queryable, key: PageKey, output: unknown): Promise<unknown> {
    const { rows } = await q.query<{ output: unknown }>(
      `INSERT INTO extraction_pages (user_id, conversation_id, from_seq, to_seq, variant, output)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT (user_id, conversation_id, from_seq, to_seq, variant) DO UPDATE
         SET output = COALESCE(extraction_pages.output, EXCLUDED.output), lease_until = NULL
       RETURNING output`,
      [key.userId, key.conversationId, key.fromSeq, key.toSeq, key.variant, JSON.stringify(output)],
    );
    return rows[0]!.output;
  },
};
