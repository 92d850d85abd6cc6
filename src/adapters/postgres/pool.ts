import { metrics } from '../../observability/metrics';
import pg from 'pg';
import { ErrorCode, isUserGoneViolation, MemoryServiceError } from '../../core/errors';
import { DATABASE_TIMEOUT_DEFAULTS } from '../../config/values';

export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface PoolOptions {
  max?: number;
  /** DATABASE_QUERY_TIMEOUT_MS: how long the client waits for any statement's answer. */
  queryTimeoutMs?: number;
  /** DATABASE_LONG_QUERY_TIMEOUT_MS: the same for the statements that may rightly take longer ({@link longQuery}). */
  longQueryTimeoutMs?: number;
}

interface Bounds {
  queryTimeoutMs: number;
  longQueryTimeoutMs: number;
}

/** The bounds of each pool, and of each client it opened, so a repository holding either finds them. */
const boundsOf = new WeakMap<object, Bounds>();

/**
 * Every statement gets a client-side bound (pg's `query_timeout`): PostgreSQL's own
 * statement_timeout cannot fire on a server that is stopped, or behind a network that drops
 * packets without a reset, and the connection stays open, so without it a request waits forever
 * on a socket nobody answers. A statement past its bound fails with pg's "Query read timeout"
 * (`dependencyTimeout`, 504) and its connection is closed ({@link dropOnTimeout}). `opts` as a
 * number is the pool's size alone.
 */
export function createPool(databaseUrl: string, opts: number | PoolOptions = {}): pg.Pool {
  const { max = 10, queryTimeoutMs = DATABASE_TIMEOUT_DEFAULTS.queryTimeoutMs, longQueryTimeoutMs = DATABASE_TIMEOUT_DEFAULTS.longQueryTimeoutMs } = typeof opts === 'number' ? { max: opts } : opts;
  const bounds = { queryTimeoutMs, longQueryTimeoutMs: Math.max(longQueryTimeoutMs, queryTimeoutMs) };
  // A request waits no longer for a connection (a free one, or a new one a hung server never
  // answers) than it would for an answer on it.
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: Math.min(5000, queryTimeoutMs), query_timeout: queryTimeoutMs });
  boundsOf.set(pool, bounds);
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    boundsOf.set(client, bounds);
    // Nor a client losing it while checked out (pg-pool listens only while it is idle): its
    // statement in flight, or the next one, fails with the cause.
    client.on('error', () => {});
    dropOnTimeout(client);
  });
  handOutAtOnce(pool);
  timePoolQueries(pool);
  return pool;
}

/** pg's error for a statement that outlived its client-side bound (`query_timeout`). */
export function isQueryTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Query read timeout';
}

/**
 * After a timeout pg still waits for the statement's answer on that connection, and a statement
 * sent next would queue behind it (and a transaction left open on the server would hold its rows
 * and locks). The connection is closed instead: pg-pool never hands it out again, and the server,
 * once it runs, sees its client gone and rolls the transaction back.
 */
function dropOnTimeout(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const drop = (err: unknown) => {
    if (isQueryTimeout(err)) client.end().catch(() => {});
  };
  client.query = ((...args: unknown[]) => {
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      return query(...args.slice(0, -1), (err: unknown, res: unknown) => {
        drop(err);
        (last as (err: unknown, res: unknown) => void)(err, res);
      });
    }
    const result = query(...args);
    if (result instanceof Promise) result.catch(drop);
    return result;
  }) as typeof client.query;
}

/**
 * A statement that may rightly run past the pool's bound: a wait for a user's or a conversation's
 * write lock, which another transaction holds across its statements, or a bulk delete. Bounded by
 * DATABASE_LONG_QUERY_TIMEOUT_MS instead; a queryable the pool did not open keeps its own.
 */
export function longQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(q: Queryable, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
  return boundedQuery<R>(q, text, values, boundsOf.get(q)?.longQueryTimeoutMs);
}

/** The pool's (or its client's) own bound for one statement, or undefined for a queryable it did not open. */
export function queryTimeoutOf(q: Queryable): number | undefined {
  return boundsOf.get(q)?.queryTimeoutMs;
}

/** One statement under a bound of its own (`undefined`: the connection's). */
export function boundedQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(q: Queryable, text: string, values: unknown[] | undefined, timeoutMs: number | undefined): Promise<pg.QueryResult<R>> {
  if (timeoutMs === undefined) return q.query<R>(text, values);
  return q.query<R>({ text, values, query_timeout: timeoutMs } as pg.QueryConfig);
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

/**
 * Every promise-style `pool.query` is timed (the transactions are timed whole, in {@link inTransaction}),
 * and a write that found its user purged fails as the conflict it is ({@link userGoneAsConflict}).
 */
function timePoolQueries(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const timed = (args: unknown[]) =>
    metrics.timed('postgres', 'query', () => query(...args) as Promise<unknown>).catch((err: unknown) => {
      throw userGoneAsConflict(err);
    });
  pool.query = ((...args: unknown[]) => (typeof args[args.length - 1] === 'function' ? query(...args) : timed(args))) as typeof pool.query;
}

/**
 * Runs `fn` in a transaction; rolls back on any error and always releases the client. A
 * connection whose statement timed out is not sent a ROLLBACK (it would queue behind the statement
 * that never answered, for another bound): it is closed, and with it the transaction; one that
 * cannot roll back is closed too, never handed to the next caller mid-transaction.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new MemoryServiceError(ErrorCode.databaseUnavailable, 'PostgreSQL unreachable', {}, { cause: err });
  }
  let broken: Error | undefined;
  try {
    return await metrics.timed('postgres', 'transaction', async () => {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    });
  } catch (err) {
    broken = isQueryTimeout(err) ? (err as Error) : await rollBack(client);
    throw userGoneAsConflict(err);
  } finally {
    client.release(broken);
  }
}

/** Rolls back; the error when it could not (the connection is broken, and is not handed out again). */
async function rollBack(client: pg.PoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * The write's foreign key to `users` found no user: a purge erased them after this request (or
 * activity) registered them. Nothing was written, and no retry can write it; as a typed conflict
 * an activity fails at once instead of being retried until its workflow gives up, and the caller
 * waiting on it is answered 409 `user_purged` (docs/security.md).
 */
export function userGoneAsConflict(err: unknown): unknown {
  if (!isUserGoneViolation(err)) return err;
  return new MemoryServiceError(ErrorCode.conflict, 'the user was erased while this request ran; nothing was stored: send it again to register the user anew', { reason: 'user_purged' }, { cause: err });
}

/**
 * Transaction holding a per-user advisory lock: writes for one user are serialised (concurrent
 * extractions cannot both "create" the same fact or lose a supersede) while users stay parallel.
 * The wait for the lock lasts as long as the transaction holding it: a long statement.
 */
export async function inUserTransaction<T>(pool: pg.Pool, userId: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, async (client) => {
    await longQuery(client, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 42))', [userId]);
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
