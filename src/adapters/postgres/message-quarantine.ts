import type { MessageQuarantine, QuarantinedMessage } from '../../core/ports/conversation';
import type { Queryable } from './pool';

export type { QuarantinedMessage } from '../../core/ports/conversation';

/**
 * Failed rule work per message, and the messages quarantined for it. Every statement names the
 * user, except the count over everyone that /healthz reads.
 */
export class PostgresMessageQuarantine implements MessageQuarantine {
  constructor(private readonly q: Queryable) {}

  /** The quarantined messages of a conversation with fromSeq < seq <= toSeq. */
  async held(input: { userId: string; conversationId: string; fromSeq: number; toSeq: number }): Promise<Set<number>> {
    const { rows } = await this.q.query<{ seq: string }>(
      `SELECT seq FROM message_quarantine
        WHERE user_id = $1 AND conversation_id = $2 AND seq > $3 AND seq <= $4 AND quarantined_at IS NOT NULL`,
      [input.userId, input.conversationId, input.fromSeq, input.toSeq],
    );
    return new Set(rows.map((r) => Number(r.seq)));
  }

  /**
   * Records one failed attempt; the message is quarantined when `quarantine` says so for this
   * attempt (the policy sees the attempts counted so far). Returns the row as it now stands.
   */
  async recordFailure(input: {
    userId: string;
    conversationId: string;
    messageId: string;
    seq: number;
    reason: 'timeout' | 'error';
    detail: string;
    quarantineAt: number;
  }): Promise<QuarantinedMessage> {
    const { rows } = await this.q.query<Row>(
      `INSERT INTO message_quarantine AS q (user_id, conversation_id, message_id, seq, reason, detail, quarantined_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7 <= 1 THEN now() END)
       ON CONFLICT (user_id, conversation_id, message_id) DO UPDATE
         SET attempts = q.attempts + 1, reason = EXCLUDED.reason, detail = EXCLUDED.detail, last_failed_at = now(),
             quarantined_at = COALESCE(q.quarantined_at, CASE WHEN q.attempts + 1 >= $7 THEN now() END)
       RETURNING *`,
      [input.userId, input.conversationId, input.messageId, input.seq, input.reason, input.detail.slice(0, 500), input.quarantineAt],
    );
    return fromRow(rows[0]!);
  }

  /** The conversation's quarantine rows (failed attempts and quarantined messages), oldest first. */
  async list(input: { userId: string; conversationId: string }): Promise<QuarantinedMessage[]> {
    const { rows } = await this.q.query<Row>('SELECT * FROM message_quarantine WHERE user_id = $1 AND conversation_id = $2 ORDER BY seq', [input.userId, input.conversationId]);
    return rows.map(fromRow);
  }

  /** How many messages are quarantined, over every user: the operator's figure (/healthz). */
  async count(): Promise<number> {
    // all-users: an operator figure, no user's data leaves the query.
    const { rows } = await this.q.query<{ n: string }>('SELECT count(*) AS n FROM message_quarantine WHERE quarantined_at IS NOT NULL');
    return Number(rows[0]?.n ?? 0);
  }
}

interface Row {
  message_id: string;
  seq: string;
  reason: 'timeout' | 'error';
  detail: string;
  attempts: number;
  first_failed_at: Date;
  last_failed_at: Date;
  quarantined_at: Date | null;
}

function fromRow(r: Row): QuarantinedMessage {
  return {
    messageId: r.message_id,
    seq: Number(r.seq),
    reason: r.reason,
    detail: r.detail,
    attempts: r.attempts,
    firstFailedAt: r.first_failed_at,
    lastFailedAt: r.last_failed_at,
    quarantinedAt: r.quarantined_at,
  };
}
