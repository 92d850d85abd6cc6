import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type pg from 'pg';

type Queryable = Pick<pg.Pool, 'query'>;

/** Hits between two sweeps of expired windows (by any one process). */
const SWEEP_EVERY = 500;

/**
 * A @fastify/rate-limit store over PostgreSQL, which every API process already shares: one atomic
 * upsert per hit, so N processes behind a load balancer spend one budget, not N. Same fixed-window
 * semantics as the plugin's in-memory store: a window starts with its key's first hit and lasts
 * `timeWindow` ms; the hit that finds its window over starts the next one at 1. The clock is the
 * database's, so processes with skewed clocks still agree on when a window ends.
 */
export class PostgresRateLimitStore implements FastifyRateLimitStore {
  private hits = 0;

  constructor(
    private readonly db: Queryable,
    private readonly onSweepError: (err: unknown) => void = () => {},
  ) {}

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    this.db
      .query<{ hits: number; ttl_ms: string }>(
        `INSERT INTO rate_limit_counters AS c (key, hits, expires_at)
         VALUES ($1, 1, now() + $2 * interval '1 millisecond')
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN c.expires_at <= now() THEN 1 ELSE c.hits + 1 END,
           expires_at = CASE WHEN c.expires_at <= now() THEN EXCLUDED.expires_at ELSE c.expires_at END
         RETURNING hits, GREATEST(0, ceil(extract(epoch FROM expires_at - now()) * 1000))::bigint AS ttl_ms`,
        [key, timeWindow],
      )
      .then(
        ({ rows }) => callback(null, { current: rows[0]!.hits, ttl: Number(rows[0]!.ttl_ms) }),
        (err: Error) => callback(err),
      );
    if (++this.hits % SWEEP_EVERY === 0) void this.sweep().catch(this.onSweepError);
  }

  /** Deletes the windows that are over; a key seen again simply starts a new row. */
  async sweep(): Promise<number> {
    const { rowCount } = await this.db.query('DELETE FROM rate_limit_counters WHERE expires_at <= now()');
    return rowCount ?? 0;
  }

  /** One table for every limiter: the key generator already names the budget and scope. */
  child(): FastifyRateLimitStore {
    return this;
  }
}
