import { describe, expect, it } from 'vitest';
import { PostgresRateLimitStore } from '../src/api/postgres-rate-limit-store';

// The shared counters must not turn a PostgreSQL outage into a 503 for every request: the store
// counts in a per-process window while the upsert fails, and goes back to the table after.

const hit = (store: PostgresRateLimitStore, key: string) =>
  new Promise<{ current: number; ttl: number }>((resolve, reject) =>
    store.incr(key, (err, result) => (err ? reject(err) : resolve(result!)), 60_000, 3),
  );

describe('PostgresRateLimitStore while PostgreSQL is unreachable', () => {
  it('counts per process, still enforces the window, and returns to the table when it answers again', async () => {
    let down = true;
    const fallbacks: unknown[] = [];
    const db = {
      query: async () => {
        if (down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        return { rows: [{ hits: 42, ttl_ms: '1000' }] };
      },
    };
    const store = new PostgresRateLimitStore(db as never, () => {}, (err) => fallbacks.push(err));

    const counts = [];
    for (let i = 0; i < 4; i++) counts.push((await hit(store, 'recall|u1')).current);
    expect(counts).toEqual([1, 2, 3, 4]);
    expect((await hit(store, 'recall|u2')).current).toBe(1);
    expect(fallbacks).toHaveLength(5);

    down = false;
    expect(await hit(store, 'recall|u1')).toEqual({ current: 42, ttl: 1000 });
    expect(fallbacks).toHaveLength(5);
  });
});
