import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deadTemporalClient } from './support/proxied-temporal';
import { loadConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';
import { findPostgresBinDir } from '../src/stack/binaries';
import { ensureDatabase, startLocalPostgres, type LocalPostgres } from '../src/stack/local-postgres';
import { migrate } from '../src/adapters/postgres/migrate';
import { freePort } from '../src/stack/managed-process';
import { extractionReconcilerWorkflow, reminderWorkflowId } from '../workflows';
import { uuidFromKey } from '../src/shared/ids';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';
import { seedMemories } from './support/seed';

// Outages answered, never crashes, on the real stack: an API whose PostgreSQL goes away (its own
// short-lived server, so the files sharing the stack's server are untouched), and an end call that
// cannot reach Temporal.

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

let ctx: TestContext; // an hour of idle time: only an end call (or its stored request) extracts
beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  ctx = await createTestContext();
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await ctx?.close();
});

async function inject_(api: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: unknown) {
  const res = await api.inject({ method, url, headers: { authorization: `Bearer ${TEST_KEY}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  let body: any = res.body;
  try {
    body = res.json();
  } catch {
    // Non-JSON answers are kept as text for the assertion to show.
  }
  return { status: res.statusCode, body };
}

describe('PostgreSQL down', () => {
  let pg: LocalPostgres;
  let runtime: Runtime;
  let api: FastifyInstance;
  const dataDir = join(tmpdir(), `jarvis-pg-outage-${randomBytes(4).toString('hex')}`);
  let port: number;
  const binDir = findPostgresBinDir(undefined, { dataDir: join(dataDir, 'pg') });

  const startPg = () => startLocalPostgres({ binDir: binDir!, dataDir: join(dataDir, 'pg'), port, database: 'jarvis', logFile: join(dataDir, 'postgres.log'), ephemeral: true });

  beforeAll(async () => {
    if (!binDir) throw new Error('no PostgreSQL server binaries found; run npm run setup');
    port = await freePort();
    pg = await startPg();
    const stack = inject('stack');
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', API_KEYS: `tenant-a:${TEST_KEY}`, CHROMA_COLLECTION: `pgdown_${randomBytes(3).toString('hex')}`, RECALL_TIMEOUT_MS: '1500' });
    runtime = await createRuntime(config, { ...stack, databaseUrl: pg.url, dataDir });
    api = await runtime.createApi();
  });
  afterAll(async () => {
    await api?.close();
    await runtime?.close();
    await pg?.process.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('recall answers with a structured error, /healthz names PostgreSQL, the process stays up and recovers by itself', async () => {
    const user = 'pg-outage-user';
    const userKey = runtime.subjects.userKey({ tenantId: 'tenant-a', userId: user });
    await seedMemories(runtime.deps, userKey, [{ text: '我对花生过敏，吃了会起疹子', at: new Date() }, { text: 'I live in Lisbon', at: new Date() }]);
    const before = await inject_(api, 'POST', `/v1/users/${user}/recall`, { query: '花生过敏' });
    expect(before.status).toBe(200);
    expect(before.body.error).toBeUndefined();
    expect(before.body.memories.map((m: { text: string }) => m.text).join(' ')).toContain('花生');

    // Fast shutdown (SIGINT): the server closes its clients' connections at once, as a crash or a
    // failover would, instead of waiting for the pool's idle connections to leave.
    const exited = new Promise((resolve) => pg.process.child.once('exit', resolve));
    pg.process.child.kill('SIGINT');
    await exited;

    const down = await inject_(api, 'POST', `/v1/users/${user}/recall`, { query: '花生过敏' });
    expect(down.status, JSON.stringify(down.body)).toBe(200);
    expect(down.body.error).toMatchObject({ code: expect.stringMatching(/^(databaseUnavailable|dependencyTimeout)$/) });
    expect(down.body.error.routes).toContain('bm25');
    // The vector route still answers: Chroma holds the ids, only their rows are out of reach.
    expect(down.body.routes.find((r: { route: string }) => r.route === 'ann')?.ok).toBe(true);
    expect(down.body.routes.find((r: { route: string }) => r.route === 'bm25')?.ok).toBe(false);

    const health = await inject_(api, 'GET', '/healthz');
    expect(health.status).toBe(503);
    expect(health.body.checks.postgres.status).toBe('down');
    expect(health.body.checks.chroma.status).toBe('ok');
    expect(health.body.checks.temporal.status).toBe('ok');

    // A write says which dependency failed, with its code, instead of a 500.
    const write = await inject_(api, 'POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: 'I have a cat named Pixel.' });
    expect(write.status, JSON.stringify(write.body)).toBe(503);
    expect(write.body.error.code).toBe('databaseUnavailable');

    // Back on the same port: the pool reconnects on its own, nothing is restarted.
    pg = await startPg();
    const recovered = await poll(
      () => inject_(api, 'POST', `/v1/users/${user}/recall`, { query: '花生过敏' }),
      (r) => r.status === 200 && !r.body.error,
      30_000,
      500,
    );
    expect(recovered.body.error).toBeUndefined();
    expect(recovered.body.memories.map((m: { text: string }) => m.text).join(' ')).toContain('花生');
    const healthy = await poll(() => inject_(api, 'GET', '/healthz'), (r) => r.status === 200, 15_000, 500);
    expect(healthy.body.checks.postgres.status).toBe('ok');
    expect(unhandled).toEqual([]);
  });
});

describe('two processes starting at once', () => {
  it('both apply migrations: the second waits for the lock of the first instead of exiting', async () => {
    const stack = inject('stack');
    const db = `test_migrate_${randomBytes(3).toString('hex')}`;
    const admin = new URL(stack.databaseUrl);
    admin.pathname = '/postgres';
    await ensureDatabase(admin.toString(), db);
    const url = new URL(stack.databaseUrl);
    url.pathname = `/${db}`;
    const [first, second] = await Promise.all([migrate(url.toString()), migrate(url.toString())]);
    // One of them applied everything, the other found nothing left to do.
    expect(first.length + second.length).toBeGreaterThan(0);
    expect(Math.min(first.length, second.length)).toBe(0);
  });
});

describe('a reminder whose workflow was never started', () => {
  it('a retry of the create with the same requestId starts it, even after its due time, and it fires once', async () => {
    const user = `${ctx.prefix}-rem`;
    const userKey = ctx.userKey(user);
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);
    // The first attempt inserted the row and died before it started the workflow (its API process
    // was killed, or Temporal and then PostgreSQL failed so the row could not be taken out again).
    const id = uuidFromKey(`reminder:api:${userKey}:r1`);
    const dueAt = new Date(Date.now() + 1500);
    const { created } = await ctx.runtime.deps.reminders.insert({
      reminder: { id, userId: userKey, text: 'Call mom', dueAt, timeZone: 'UTC', rrule: null, seriesStart: null, assumedTime: false, source: { via: 'api', requestId: 'r1' }, workflowId: reminderWorkflowId(userKey, id) },
      at: new Date(),
    });
    expect(created).toBe(true);
    await new Promise((r) => setTimeout(r, 2000));

    // The client's retry comes after the due time: the same body, the same requestId.
    const body = { text: 'Call mom', dueAt: dueAt.toISOString(), timezone: 'UTC', requestId: 'r1' };
    const retry = await ctx.call('POST', `/v1/users/${user}/reminders`, body);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.id).toBe(id);
    const fired = await poll(() => ctx.call('GET', `/v1/users/${user}/reminders/${id}`), (r) => r.body.fireCount >= 1, 30_000, 250);
    expect(fired.body).toMatchObject({ status: 'fired', fireCount: 1 });
    // Another retry changes nothing: one workflow, one firing, one notification.
    expect((await ctx.call('POST', `/v1/users/${user}/reminders`, body)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await ctx.call('GET', `/v1/users/${user}/reminders/${id}`)).body.fireCount).toBe(1);
    const notifications = await ctx.call('GET', `/v1/users/${user}/notifications?kind=reminder`);
    expect(notifications.body.notifications).toHaveLength(1);
  });
});

describe('Temporal unreachable at the end call', () => {
  it('stores the end request (202 pending) and the reconciler extracts the conversation on recovery without waiting for the idle time', async () => {
    const ended = `${ctx.prefix}-ended`;
    const idleOnly = `${ctx.prefix}-idle`;
    const { temporal: dead } = await deadTemporalClient(ctx.runtime.config.temporal.namespace);
    const api = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue, temporal: dead });
    try {
      for (const user of [ended, idleOnly]) {
        const res = await inject_(api, 'POST', `/v1/users/${user}/conversations/c1/messages`, {
          messages: [
            { id: 'm1', role: 'user', content: 'I am allergic to penicillin.' },
            { id: 'm2', role: 'user', content: '我养了一只猫，叫咪咪。' },
          ],
        });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        expect(res.body.pending).toBe(true);
      }
      const t0 = Date.now();
      const end = await inject_(api, 'POST', `/v1/users/${ended}/conversations/c1/end`, {});
      expect(end.status, JSON.stringify(end.body)).toBe(202);
      expect(end.body).toEqual({ workflowId: ctx.extractWorkflowId(ended, 'c1'), pending: true });
      expect(Date.now() - t0).toBeLessThan(ctx.runtime.config.reliability.temporalCallMs + 3_000);
      // wait=true cannot wait on a workflow it could not start: the same pending answer.
      const waited = await inject_(api, 'POST', `/v1/users/${ended}/conversations/c1/end?wait=true`, {});
      expect(waited.status).toBe(202);
      expect(waited.body.pending).toBe(true);
      // An unknown conversation is still 404, not a stored request.
      expect((await inject_(api, 'POST', `/v1/users/${ended}/conversations/nope/end`, {})).status).toBe(404);
    } finally {
      await api.close();
      await dead.connection.close().catch(() => {});
    }

    // Recovery: one reconciler tick with the configured idle time (an hour). The ended
    // conversation is taken at once; the one that was only left idle waits for its hour.
    const tick = await ctx.runtime.temporal.workflow.execute(extractionReconcilerWorkflow, {
      taskQueue: ctx.taskQueue,
      workflowId: `reconcile-${ctx.prefix}`,
      args: [{}],
    });
    expect(tick).toEqual({ found: 1, started: 1, failed: 0 });
    const extraction = await ctx.runtime.temporal.workflow.getHandle(ctx.extractWorkflowId(ended, 'c1')).result();
    expect(extraction.messagesProcessed).toBe(2);
    const memories = (await ctx.call('GET', `/v1/users/${ended}/memories?status=active`)).body.memories as { text: string }[];
    expect(memories.map((m) => m.text).join(' | ')).toMatch(/penicillin/);
    const { rows } = await ctx.runtime.pool.query<{ user_id: string; behind: boolean }>(
      'SELECT user_id, last_seq > extracted_seq AS behind FROM conversations WHERE user_id = ANY($1::text[])',
      [[ctx.userKey(ended), ctx.userKey(idleOnly)]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.user_id, r.behind]))).toEqual({ [ctx.userKey(ended)]: false, [ctx.userKey(idleOnly)]: true });

    // A message after the recorded end is not an end request: it waits for the idle time again.
    await ctx.call('POST', `/v1/users/${ended}/conversations/c1/messages`, { id: 'm3', role: 'user', content: 'I prefer tea over coffee.' });
    const next = await ctx.runtime.temporal.workflow.execute(extractionReconcilerWorkflow, { taskQueue: ctx.taskQueue, workflowId: `reconcile-${ctx.prefix}-2`, args: [{}] });
    expect(next.found).toBe(0);
  });
});
