import type { OutboxEntry, VectorOutbox } from '../../core/ports/memory';
import type { Queryable } from './pool';

/** Pending vector writes: PostgreSQL committed them, Chroma has not confirmed them yet. */
export class PostgresVectorOutbox implements VectorOutbox {
  constructor(private readonly db: Queryable) {}

  async pending(opts: { limit: number; userId?: string; ids?: string[] }): Promise<OutboxEntry[]> {
    const { rows } = await this.db.query(
      `SELECT o.memory_id, o.user_id, o.op, o.enqueued_at, m.text, m.type, m.created_at
         FROM vector_outbox o JOIN memories m ON m.id = o.memory_id AND m.user_id = o.user_id
        WHERE ($2::text IS NULL OR o.user_id = $2) AND ($3::uuid[] IS NULL OR o.memory_id = ANY($3::uuid[]))
        ORDER BY o.enqueued_at
        LIMIT $1`,
      [opts.limit, opts.userId ?? null, opts.ids ?? null],
    );
    return rows.map((r) => ({
      memoryId: r.memory_id,
      userId: r.user_id,
      op: r.op,
      enqueuedAt: r.enqueued_at,
      text: r.text,
      type: r.type,
      createdAt: r.created_at,
    }));
  }

  /**
   * Clears an entry only if nothing newer was enqueued for the memory in the meantime. Compared at
   * millisecond precision: `enqueued_at` has microseconds, the JS Date read back has not, so an
   * exact comparison never matched and synced entries stayed in the outbox for ever.
   */
  async done({ userId, memoryId, enqueuedAt }: { userId: string; memoryId: string; enqueuedAt: Date }): Promise<void> {
    await this.db.query(`DELETE FROM vector_outbox WHERE user_id = $1 AND memory_id = $2 AND date_trunc('milliseconds', enqueued_at) = $3`, [userId, memoryId, enqueuedAt]);
  }

  async failed({ userId, memoryIds, error }: { userId: string; memoryIds: string[]; error: string }): Promise<void> {
    await this.db.query('UPDATE vector_outbox SET attempts = attempts + 1, last_error = $3 WHERE user_id = $1 AND memory_id = ANY($2::uuid[])', [
      userId,
      memoryIds,
      error.slice(0, 500),
    ]);
  }
}
