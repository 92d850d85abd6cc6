import { describe, expect, it } from 'vitest';
import { createPool } from '../src/adapters/postgres/pool';
import { loadConfig } from '../src/config';

// The client-side bounds on PostgreSQL statements: read from the environment, and what a pool
// built without the configuration gets (no connection is opened here).

const options = (pool: ReturnType<typeof createPool>) => (pool as unknown as { options: { query_timeout: number; connectionTimeoutMillis: number; max: number } }).options;

describe('PostgreSQL statement bounds', () => {
  it('defaults to 15 s for any statement and 120 s for the long ones, and reads both from the environment', () => {
    expect(loadConfig({}).postgres).toMatchObject({ queryTimeoutMs: 15_000, longQueryTimeoutMs: 120_000 });
    expect(loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '2000', DATABASE_LONG_QUERY_TIMEOUT_MS: '30000' }).postgres).toMatchObject({ queryTimeoutMs: 2000, longQueryTimeoutMs: 30_000 });
  });

  it('refuses no bound at all, a bound too short to answer anything, and one past what a timer holds, naming the variable', () => {
    for (const bad of ['0', '50', '-1', 'never', '1.5']) expect(() => loadConfig({ DATABASE_QUERY_TIMEOUT_MS: bad })).toThrow(/DATABASE_QUERY_TIMEOUT_MS/);
    expect(() => loadConfig({ DATABASE_LONG_QUERY_TIMEOUT_MS: String(2 ** 31) })).toThrow(/DATABASE_LONG_QUERY_TIMEOUT_MS/);
  });

  it('a pool is bounded without being told, and waits for a connection no longer than for an answer', async () => {
    const plain = createPool('postgres://nobody@127.0.0.1:1/none');
    const short = createPool('postgres://nobody@127.0.0.1:1/none', { queryTimeoutMs: 1500 });
    const sized = createPool('postgres://nobody@127.0.0.1:1/none', 3);
    try {
      expect(options(plain)).toMatchObject({ query_timeout: loadConfig({}).postgres.queryTimeoutMs, connectionTimeoutMillis: 5000, max: 10 });
      expect(options(short)).toMatchObject({ query_timeout: 1500, connectionTimeoutMillis: 1500 });
      expect(options(sized)).toMatchObject({ query_timeout: 15_000, max: 3 });
    } finally {
      await Promise.all([plain.end(), short.end(), sized.end()]);
    }
  });
});
