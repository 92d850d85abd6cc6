import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { PostgresUserExportSource } from '../src/adapters/postgres/export-repository';
import { createPool, inTransaction, inUserTransaction } from '../src/adapters/postgres/pool';
import { loadConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';
import { proxiedTestDatabase, type FaultProxy } from './support/fault-proxy';
import { poll } from './support/poll';
import { TEST_KEY } from './support/harness';

// A PostgreSQL that stops answering (SIGSTOP, a black-holed route) with its connections still
// open: nothing is refused, so only a client-side bound ends a statement. The API is built on a
// pool that reaches the shared server through a forwarder the test can hang.

const QUERY_TIMEOUT_MS = 1500;
/** What a request may take while PostgreSQL hangs: its statement's bound and the pool's connect timeout, with room for a loaded machine. */
const ANSWER_WITHIN_MS = 9000;

let proxy: FaultProxy;
let pool: pg.Pool;
let runtime: Runtime;
let api: FastifyInstance;
let proxiedUrl: string;
let directUrl: string;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  const stack = inject('stack');
  const prefix = `h${randomBytes(4).toString('hex')}`;
  ({ directUrl, proxiedUrl, proxy } = await proxiedTestDatabase(stack.databaseUrl, prefix));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    API_KEYS: `tenant-a:${TEST_KEY}`,
    CHROMA_COLLECTION: `pghang_${prefix}`,
    TEMPORAL_TASK_QUEUE: `q-${prefix}`,
    CONVERSATION_IDLE_SECONDS: '3600',
    PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE: 'false',
    // Recall answers within its own budget, then reads the rows of what it found.
    RECALL_TIMEOUT_MS: '1500',
  });
  pool = createPool(proxiedUrl, { queryTimeoutMs: QUERY_TIMEOUT_MS });
  runtime = await createRuntime(config, { ...stack, databaseUrl: directUrl, dataDir: '' }, { pool });
  api = await runtime.createApi();
});
afterEach(async () => {
  await proxy?.restore();
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await proxy?.restore();
  await api?.close();
  await runtime?.close();
  await pool?.end();
  await proxy?.close();
});

async function call(method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const res = await api.inject({ method, url, headers: { authorization: `Bearer ${TEST_KEY}` }, ...(payload ? { payload } : {}) });
  let body: any = res.body;
  try {
    body = res.json();
  } catch {
    // Kept as text for the assertion to show.
  }
  return { status: res.statusCode, body, ms: Date.now() - started };
}

/** The request's answer, or a stand-in once `ms` have passed: a hung request must fail the test, not stall it. */
function within<T>(p: Promise<T>, ms: number): Promise<T | { status: 'still waiting'; ms: number }> {
  return Promise.race([p, new Promise<{ status: 'still waiting'; ms: number }>((resolve) => setTimeout(() => resolve({ status: 'still waiting', ms }), ms))]);
}

describe('PostgreSQL hangs', () => {
  it('recall, the memory list and a write answer with a machine-readable code within a bound, no timed-out connection is reused, and requests work again once it answers', async () => {
    const user = 'hang-user';
    const seeded = await call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: 'I have a cat named Pixel.' });
    expect(seeded.status, JSON.stringify(seeded.body)).toBe(202);
    expect((await call('GET', `/v1/users/${user}/memories`)).status).toBe(200);
    // Connections to the server are open and pooled when it stops answering.
    expect(pool.totalCount).toBeGreaterThan(0);

    proxy.hang();
    const [recall, list, write] = await Promise.all([
      within(call('POST', `/v1/users/${user}/recall`, { query: 'what pet do I have?' }), 30_000),
      within(call('GET', `/v1/users/${user}/memories`), 30_000),
      within(call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm2', role: 'user', content: 'Pixel is three years old.' }), 30_000),
    ]);
    // Recall keeps its contract: an answer with the failed routes' code in `error` (docs/recall.md).
    expect(recall.ms, JSON.stringify(recall)).toBeLessThan(ANSWER_WITHIN_MS);
    expect('body' in recall && recall.body.error?.code, JSON.stringify(recall)).toMatch(/^(dependencyTimeout|databaseUnavailable)$/);
    for (const answer of [list, write]) {
      expect(answer.ms, JSON.stringify(answer)).toBeLessThan(ANSWER_WITHIN_MS);
      expect(answer.status, JSON.stringify(answer)).toBeGreaterThanOrEqual(500);
      expect('body' in answer && answer.body.error.code, JSON.stringify(answer)).toMatch(/^(dependencyTimeout|databaseUnavailable)$/);
    }
    // A connection whose statement timed out still waits for that answer: it is closed, never
    // handed to the next request.
    await poll(async () => pool.idleCount, (n) => n === 0, 5000, 100);
    expect(pool.idleCount).toBe(0);

    await proxy.restore();
    const listed = await poll(() => call('GET', `/v1/users/${user}/memories`), (r) => r.status === 200, 20_000, 250);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const recalled = await call('POST', `/v1/users/${user}/recall`, { query: 'what pet do I have?' });
    expect(recalled.status).toBe(200);
    expect(recalled.body.error).toBeUndefined();
    const wrote = await call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm3', role: 'user', content: 'Pixel likes tuna.' });
    expect(wrote.status, JSON.stringify(wrote.body)).toBe(202);
    expect(unhandled).toEqual([]);
  });

  it('a transaction whose statement timed out gives its connection up at once, without waiting on a ROLLBACK the server will not answer', async () => {
    const own = createPool(proxiedUrl, { queryTimeoutMs: QUERY_TIMEOUT_MS });
    try {
      await own.query('SELECT 1');
      proxy.hang();
      const started = Date.now();
      const failed = await within(
        inTransaction(own, (c) => c.query('SELECT 1')).then(
          () => ({ status: 'resolved' as const }),
          (err: Error) => ({ status: 'rejected' as const, message: err.message }),
        ),
        30_000,
      );
      const ms = Date.now() - started;
      expect(failed).toMatchObject({ status: 'rejected' });
      // BEGIN alone is the statement that timed out; a ROLLBACK behind it would add another bound.
      expect(ms).toBeLessThan(QUERY_TIMEOUT_MS * 2);
      expect(own.idleCount).toBe(0);
      expect(own.totalCount).toBe(0);
      await proxy.restore();
      expect((await own.query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n).toBe(1);
    } finally {
      await proxy.restore();
      await own.end();
    }
  });

  it('what rightly outlasts the bound is not cut: an export read under its own statement_timeout, a wait for the user\'s write lock', async () => {
    const own = createPool(directUrl, { queryTimeoutMs: QUERY_TIMEOUT_MS, longQueryTimeoutMs: 20_000 });
    const blocker = createPool(directUrl, { max: 1 });
    const userKey = 'tenant-a:longwaituser';
    const holdFor = QUERY_TIMEOUT_MS * 2;
    /** Runs `fn` on a connection of its own for `ms`, inside a transaction. */
    const holding = async (sql: string, values: unknown[]) => {
      const c = await blocker.connect();
      await c.query('BEGIN');
      await c.query(sql, values);
      return () => c.query('COMMIT').finally(() => c.release());
    };
    try {
      // A plain statement blocked that long fails at the bound: the control.
      let release = await holding('LOCK TABLE users IN ACCESS EXCLUSIVE MODE', []);
      let timer = setTimeout(() => void release(), holdFor);
      await expect(own.query('SELECT count(*) FROM users')).rejects.toThrow('Query read timeout');
      await new Promise((r) => setTimeout(r, holdFor));
      clearTimeout(timer);

      // The export's read waits for the same lock, within the export's statement_timeout.
      release = await holding('LOCK TABLE users IN ACCESS EXCLUSIVE MODE', []);
      timer = setTimeout(() => void release(), holdFor);
      const snapshot = await new PostgresUserExportSource(own).openSnapshot({ statementTimeoutMs: holdFor * 3 });
      try {
        expect(await snapshot.user({ userKey })).toBeUndefined();
      } finally {
        await snapshot.close({ completed: true });
        clearTimeout(timer);
      }

      // A write for a user waits for the transaction holding the user's lock.
      release = await holding('SELECT pg_advisory_xact_lock(hashtextextended($1, 42))', [userKey]);
      timer = setTimeout(() => void release(), holdFor);
      const started = Date.now();
      expect(await inUserTransaction(own, userKey, async (c) => (await c.query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n)).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(holdFor - 100);
      clearTimeout(timer);
    } finally {
      await own.end();
      await blocker.end();
    }
  });
});

