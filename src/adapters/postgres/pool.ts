import { metrics } from '../../observability/metrics';
import pg from 'pg';
import { ErrorCode, MemoryServiceError } from '../../core/errors';

export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  handOutAtOnce(pool);
  timePoolQueries(pool);
  return pool;
}

/**
 * pg-pool hands an idle client out on a later tick (process.nextTick), and that tick comes only
 * after every promise callback already queued has run. Inside a recall those are its routes' whole
 * start (the LangChain retrievers, the Chroma request, the episodic plan), so none of its six
 * statements left before them: 3.6 ms at p50 at load 17, 5–8 ms of each statement's time at
 * load 15–24 (`npm run bench -- recall --trace`). Pulsing the pool's queue at once hands an idle
 * client out inside `connect`, and `pool.query` writes its statement there and then. A pool
 * without that internal keeps pg-pool's own pacing.
 */
function handOutAtOnce(pool: pg.Pool): void {
  const pulse = (pool as unknown as { _pulseQueue?: () => void })._pulseQueue;
  if (typeof pulse !== 'function') return;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  pool.connect = ((...args: unknown[]) => {
    const result = connect(...args);
    // While ending, the pulse would close idle clients: leave that to pg-pool's own end.
    if (!pool.ending && pool.idleCount > 0 && pool.waitingCount > 0) pulse.call(pool);
    return result;
  }) as typeof pool.connect;
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

/** When one statement sent through `pool.query` reached each step, in `performance.now()` ms. */
export interface StatementTiming {
  text: string;
  /** Set when it was sent as a named (prepared) statement (prepared.ts). */
  name?: string;
  values: unknown[] | undefined;
  /** `pool.query` called. */
  requested: number;
  /** A client handed out by the pool: the statement is written to its socket now. */
  acquired: number;
  /** The first message of the answer handled by the client (the server has planned and run it; the event loop got to the socket). */
  answered: number;
  /** ReadyForQuery handled: every row received and parsed, the caller's callback called. */
  parsed: number;
  rows: number;
}

interface TracedConnection {
  once(event: string, fn: () => void): void;
  removeListener(event: string, fn: () => void): void;
}

/**
 * Opt-in (benchmarks): times every promise-style `pool.query` (a text with values, or a query
 * config such as prepared.ts's named statements) step by step, through the client
 * the pool hands out (callbacks all the way, as `pool.query` itself does, so the trace adds no
 * tick), so a statement's time inside a recall splits into the wait for a client, the server and
 * the wire, and the parse. Returns the function that puts the pool back.
 */
export function traceStatements(pool: pg.Pool, sink: (t: StatementTiming) => void): () => void {
  const original = pool.query;
  pool.query = ((first: unknown, second?: unknown) => {
    if (typeof second === 'function' || (typeof first !== 'string' && (typeof first !== 'object' || first === null))) return (original as (...a: unknown[]) => unknown).call(pool, first, second);
    const config = typeof first === 'string' ? { text: first, values: (second as unknown[] | undefined) ?? [] } : (first as { name?: string; text: string; values?: unknown[] });
    const requested = performance.now();
    return new Promise((resolve, reject) => {
      pool.connect((err, client, release) => {
        if (err || !client) return reject(err ?? new Error('no client'));
        const acquired = performance.now();
        let answered = Number.NaN;
        const connection = (client as unknown as { connection: TracedConnection }).connection;
        const mark = () => (answered = Number.isNaN(answered) ? performance.now() : answered);
        // A named statement already parsed on this client answers with bindComplete first.
        const events = ['parseComplete', 'bindComplete', 'rowDescription', 'errorMessage'];
        for (const event of events) connection.once(event, mark);
        client.query({ ...config, values: config.values ?? [] }, (queryErr: Error | undefined, result: pg.QueryResult) => {
          const parsed = performance.now();
          for (const event of events) connection.removeListener(event, mark);
          release(queryErr);
          if (queryErr) return reject(queryErr);
          sink({ text: config.text, values: config.values, ...(config.name ? { name: config.name } : {}), requested, acquired, answered, parsed, rows: result.rowCount ?? result.rows.length });
          resolve(result);
        });
      });
    });
  }) as typeof pool.query;
  return () => {
    pool.query = original;
  };
}
