import type { DueOutboxEntry, OutboxHealth, OutboxRetryRepository, RetryPolicy } from '../../core/ports/memory';
import type { Queryable } from './pool';

/**
 * The vector outbox as the scheduled drain sees it (migrations/1796400000000_…): entries that are
 * due (`next_attempt_at` passed, not dead-lettered), their retries with exponential backoff, and
 * the dead letters. Entries are read without requiring their memory row: a hard-erased memory's
 * pending delete has none, and an upsert whose memory is gone has nothing left to write.
 */
export class PostgresOutboxRetryRepository implements OutboxRetryRepository {
  constructor(private readonly q: Queryable) {}

  async due({ limit, userId }: { limit: number; userId?: string }): Promise<DueOutboxEntry[]> {
    const { rows } = await this.q.query(
      `-- all-users: the scheduled drain takes due entries of every user (or of one, with $2)
       SELECT o.memory_id, o.user_id, o.op, o.enqueued_at, o.attempts, m.text, m.type, m.created_at
         FROM vector_outbox o LEFT JOIN memories m ON m.id = o.memory_id AND m.user_id = o.user_id
        WHERE o.dead_lettered_at IS NULL AND o.next_attempt_at <= clock_timestamp()
          AND ($2::text IS NULL OR o.user_id = $2)
        ORDER BY o.next_attempt_at, o.enqueued_at
        LIMIT $1`,
      [limit, userId ?? null],
    );
    return rows.map(
      (r): DueOutboxEntry => ({
        memoryId: r.memory_id,
        userId: r.user_id,
        op: r.op,
        enqueuedAt: r.enqueued_at,
        attempts: r.attempts,
        memory: r.text === null ? undefined : { text: r.text, type: r.type, createdAt: r.created_at },
      }),
    );
  }

  /** Clears the entry unless it was re-enqueued meanwhile (millisecond precision, see outbox-repository). */
  async done(entry: DueOutboxEntry): Promise<void> {
    await this.q.query(`DELETE FROM vector_outbox WHERE user_id = $1 AND memory_id = $2 AND date_trunc('milliseconds', enqueued_at) = $3`, [
      entry.userId,
      entry.memoryId,
      entry.enqueuedAt,
    ]);
  }

  /**
   * One more failed attempt: the entry waits base·2^(attempts) (capped), and is dead-lettered on
   * reaching the policy's attempts. An entry re-enqueued meanwhile is left alone.
   */
  async failed({ entries, error, policy }: { entries: DueOutboxEntry[]; error: string; policy: RetryPolicy }): Promise<{ deadLettered: number }> {
    if (entries.length === 0) return { deadLettered: 0 };
    const { rows } = await this.q.query<{ dead: boolean }>(
      `UPDATE vector_outbox o
          SET attempts = o.attempts + 1,
              last_error = $4,
              next_attempt_at = clock_timestamp() + make_interval(secs => LEAST($6::float8, $5::float8 * power(2, o.attempts)) / 1000),
              dead_lettered_at = CASE WHEN o.attempts + 1 >= $7 THEN clock_timestamp() END
         FROM unnest($1::text[], $2::uuid[], $3::timestamptz[]) AS x(user_id, memory_id, enqueued_at)
        WHERE o.user_id = x.user_id AND o.memory_id = x.memory_id AND date_trunc('milliseconds', o.enqueued_at) = x.enqueued_at
        RETURNING o.dead_lettered_at IS NOT NULL AS dead`,
      [
        entries.map((e) => e.userId),
        entries.map((e) => e.memoryId),
        entries.map((e) => e.enqueuedAt),
        (error || 'unknown error').slice(0, 500),
        policy.baseDelayMs,
        policy.maxDelayMs,
        policy.maxAttempts,
      ],
    );
    return { deadLettered: rows.filter((r) => r.dead).length };
  }

  async health(): Promise<OutboxHealth> {
    const { rows } = await this.q.query<{ pending: number; dead: number; oldest: number | null }>(
      `-- all-users: operator summary for /healthz, counts only
       SELECT count(*) FILTER (WHERE dead_lettered_at IS NULL)::int AS pending,
              count(*) FILTER (WHERE dead_lettered_at IS NOT NULL)::int AS dead,
              EXTRACT(EPOCH FROM clock_timestamp() - min(enqueued_at) FILTER (WHERE dead_lettered_at IS NULL))::float8 AS oldest
         FROM vector_outbox`,
    );
    const r = rows[0];
    return { pending: r?.pending ?? 0, deadLetters: r?.dead ?? 0, oldestPendingSeconds: r?.oldest === null || r?.oldest === undefined ? null : Math.round(r.oldest) } satisfies OutboxHealth;
  }
}
