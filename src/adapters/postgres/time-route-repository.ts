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
    // LATERAL, so that each range is an index range scan on (user_id, created_at) that stops after
    // k rows; as a plain join the planner walked all of the user's memories and filtered by range
    // (22 ms at 10k memories, 52 ms at 100k in the recall bench).
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT DISTINCT ON (m.created_at, m.id) m.id, m.created_at
         FROM unnest($2::timestamptz[], $3::timestamptz[]) AS r(s, x)
         CROSS JOIN LATERAL (
           SELECT id, created_at FROM memories
            WHERE user_id = $1 AND status = 'active' AND created_at >= r.s AND created_at < r.x
              AND (expires_at IS NULL OR expires_at > $5)
            ORDER BY created_at DESC, id
            LIMIT $4) m
        ORDER BY m.created_at DESC, m.id
        LIMIT $4`,
      [userId, ranges.map((r) => r.start), ranges.map((r) => r.end), k, now],
    );
    return rows.map((r) => r.id);
  }
}
