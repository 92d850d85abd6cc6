import type { MemoryTimeRoute } from '../../core/ports/memory';
import type { Queryable } from './pool';

/** The time route over memories: what the user said inside the date ranges a query names. */
export class PostgresTimeRoute implements MemoryTimeRoute {
  constructor(private readonly db: Queryable) {}

  /**
   * Active, unexpired memories whose time (when they were said) falls in one of the ranges, most
   * recent first.
   */
  async memoriesSaidIn({ userId, ranges, k, now }: { userId: string; ranges: readonly { start: Date; end: Date }[]; k: number; now: Date }): Promise<string[]> {
    if (ranges.length === 0) return [];
    // Each range is read newest first from (user_id, created_at DESC, id) and stops after k rows,
    // in a function planned with sorting off (recall_said_in, migration 1797500000000): as a plain
    // join the planner walked all of the user's memories and filtered by range (22 ms at 10k
    // memories), and on rows never analyzed it read them all through (user_id, status, type) and sorted (9 ms).
    const { rows } = await this.db.query<{ id: string }>(
      'SELECT id FROM recall_said_in($1, $2::timestamptz[], $3::timestamptz[], $4, $5)',
      [userId, ranges.map((r) => r.start), ranges.map((r) => r.end), k, now],
    );
    return rows.map((r) => r.id);
  }
}
