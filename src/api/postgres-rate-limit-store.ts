import { createRequire } from 'node:module';
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import type pg from 'pg';

// The plugin's own in-memory store (not re-exported by its index): the per-process window this
// store falls back to while PostgreSQL cannot be reached.
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache: number,
) => FastifyRateLimitStore;

type Queryable = Pick<pg.Pool, 'query'>;

/** Hits between two sweeps of expired windows (by any one process). */
const SWEEP_EVERY = 500;

/**
 * A @fastify/rate-limit store over PostgreSQL, which every API process already shares: one atomic
 * upsert per hit, so N processes behind a load balancer spend one budget, not N. Same fixed-window
 * semantics as the plugin's in-memory store: a window starts with its key's first hit and lasts
 * `timeWindow` ms; the hit that finds its window over starts the next one at 1. The clock is the
 * database's, so processes with skewed clocks still agree on when a window ends.
 *
 * A counter is not worth an outage: when the upsert fails (PostgreSQL down or failing over) the hit
 * is counted in a per-process in-memory window instead, so recall keeps answering from the routes
 * that still work and every budget is still enforced, per process, until PostgreSQL is back.
 */
export class PostgresRateLimitStore implements FastifyRateLimitStore {
  private hits = 0;
  private readonly local: FastifyRateLimitStore;

  constructor(
    private readonly db: Queryable,
    private readonly onSweepError: (err: unknown) => void = () => {},
    private readonly onFallback: (err: unknown) => void = () => {},
    localKeys = 20_000,
  ) {
    this.local = new LocalStore(false, false, localKeys);
  }

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
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
        (err: unknown) => {
          this.onFallback(err);
          this.local.incr(key, callback, timeWindow, max);
        },
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
