import type { Queryable } from './pool';

/** The time route over memories: what the user said inside the date ranges a query names. */
export const timeRouteStore = {
  /**
   * Active, unexpired memories whose time (when they were said) falls in one of the ranges, most
   * recent first.
   */
  async memoriesSaidIn(q: Queryable, userId: string, ranges: readonly { start: Date; end: Date }[], k: number, now: Date): Promise<string[]> {
    if (ranges.length === 0) return [];
    const { rows } = await q.query<{ id: string }>(
      `SELECT DISTINCT ON (m.created_at, m.id) m.id, m.created_at
         FROM unnest($2::timestamptz[], $3::timestamptz[]) AS r(s, x)
         JOIN memories m ON m.user_id = $1 AND m.status = 'active' AND m.created_at >= r.s AND m.created_at < r.x
        WHERE m.expires_at IS NULL OR m.expires_at > $5
        ORDER BY m.created_at DESC, m.id
        LIMIT $4`,
      [userId, ranges.map((r) => r.start), ranges.map((r) => r.end), k, now],
    );
    return rows.map((r) => r.id);
  },
};
