import { metrics } from '../../observability/metrics';
import pg from 'pg';
import { ErrorCode, MemoryServiceError } from '../../core/errors';

export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  timePoolQueries(pool);
  return pool;
}

/** Every promise-style `pool.query` is timed (the transactions are timed whole, in {@link inTransaction}). */
function timePoolQueries(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) =>
    typeof args[args.length - 1] === 'function' ? query(...args) : metrics.timed('postgres', 'query', () => query(...args) as Promise<unknown>)) as typeof pool.query;
}

/** Runs `fn` in a transaction; rolls back on any error and always releases the client. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new MemoryServiceError(ErrorCode.databaseUnavailable, 'PostgreSQL unreachable', {}, { cause: err });
  }
  try {
    return await metrics.timed('postgres', 'transaction', async () => {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    });
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      // The connection is already broken; the original error is the one worth reporting.
    });
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Transaction holding a per-user advisory lock: writes for one user are serialised (concurrent
 * extractions cannot both "create" the same fact or lose a supersede) while users stay parallel.
 */
export async function inUserTransaction<T>(pool: pg.Pool, userId: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 42))', [userId]);
    return fn(client);
  });
}
