import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ReminderRecord } from '../src/core/ports/proactive';
import { reconcileReminders } from '../src/proactive/reminder-reconciler';
import { startReminderWorkflow } from '../src/proactive/reminders';
import { digestScheduleId } from '../src/proactive/proactive-schedules';
import { temporalClientThrough } from './support/proxied-temporal';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { poll } from './support/poll';

// Reminders, settings and digests while Temporal hangs (bytes swallowed, connections open) or is
// cut: every answer comes within the configured deadline, and a reminder whose start went out
// unanswered fires exactly once whether Temporal takes that start late or never.

const CALL_MS = 2000;
const WAIT_MS = 3000;
/** What an answer may take beyond its deadline on a loaded machine. */
const SLACK_MS = 2500;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ TEMPORAL_CALL_TIMEOUT_MS: String(CALL_MS), WORKFLOW_WAIT_TIMEOUT_MS: String(WAIT_MS) });
});
afterAll(async () => {
  await ctx?.close();
});

/** An API of the test's context whose Temporal client goes through a fault proxy. */
interface ProxiedApi {
  proxy: FaultProxy;
  api: FastifyInstance;
  call(method: 'GET' | 'POST' | 'PUT', path: string, payload?: object): Promise<{ status: number; body: any; ms: number }>;
  close(): Promise<void>;
}

let open: ProxiedApi | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function proxiedApi(): Promise<ProxiedApi> {
  const proxy = await startFaultProxy(inject('stack').temporalAddress);
  const temporal = temporalClientThrough(ctx, proxy.address);
  const api = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue, temporal });
  open = {
    proxy,
    api,
    async call(method, path, payload) {
      const started = Date.now();
      // A request that never answers fails the test here instead of holding it to its timeout.
      const res = await Promise.race([
        api.inject({ method, url: path, headers: { authorization: `Bearer ${TEST_KEY}` }, ...(payload ? { payload } : {}) }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} ${path}: no answer within 20 s`)), 20_000)),
      ]);
      let body: any = res.body;
      try {
        body = res.json();
      } catch {
        // Kept as text for the assertion to show.
      }
      return { status: res.statusCode, body, ms: Date.now() - started };
    },
    async close() {
      // Held calls are reset by the restore and fail or finish before the client closes.
      await proxy.restore();
      await api.close();
      await temporal.connection.close().catch(() => {});
      await proxy.close();
    },
  };
  return open;
}

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

async function firings(userKey: string, reminderId: string): Promise<number> {
  const { rows } = await ctx.runtime.pool.query('SELECT count(*)::int AS n FROM notifications WHERE user_id = $1 AND reminder_id = $2', [userKey, reminderId]);
  return rows[0].n as number;
}

describe('Temporal hung or cut before anything is stored', () => {
  it('reminder create, settings change and digest answer 503 workflowUnavailable within TEMPORAL_CALL_TIMEOUT_MS, the reminder not stored', async () => {
    for (const fault of ['hang', 'cut'] as const) {
      const user = `${ctx.prefix}-before-${fault}`;
      const { proxy, call } = await proxiedApi();
      expect((await call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);
      if (fault === 'hang') proxy.hang();
      else await proxy.cut();

      const created = await call('POST', `/v1/users/${user}/reminders`, { text: 'call mom', dueAt: inSeconds(3600), requestId: 'r1' });
      expect(created.status, `${fault}: ${JSON.stringify(created.body)}`).toBe(503);
      expect(created.body.error.code).toBe('workflowUnavailable');
      expect(created.ms).toBeLessThan(CALL_MS + SLACK_MS);
      expect((await call('GET', `/v1/users/${user}/reminders`)).body.reminders).toEqual([]);

      const settings = await call('PUT', `/v1/users/${user}/settings`, { digestTime: '07:30', proactive: { enabled: false } });
      expect(settings.status, `${fault}: ${JSON.stringify(settings.body)}`).toBe(503);
      expect(settings.body.error.code).toBe('workflowUnavailable');
      expect(settings.ms).toBeLessThan(CALL_MS + SLACK_MS);
      // Stored all the same, as the answer says.
      expect((await call('GET', `/v1/users/${user}/settings`)).body).toMatchObject({ digestTime: '07:30', proactive: { enabled: false } });

      const digest = await call('POST', `/v1/users/${user}/digests`);
      expect(digest.status, `${fault}: ${JSON.stringify(digest.body)}`).toBe(503);
      expect(digest.body.error.code).toBe('workflowUnavailable');
      expect(digest.ms).toBeLessThan(CALL_MS + SLACK_MS);
      await open?.close();
      open = undefined;
    }
  });

  it('a settings change whose schedules were not updated reaches them with the user’s next activity', async () => {
    const user = `${ctx.prefix}-resync`;
    const { proxy, call } = await proxiedApi();
    expect((await call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC', digestTime: '22:00' })).status).toBe(200);
    // The user is active: this process has brought their schedules in line once already.
    expect((await call('POST', `/v1/users/${user}/reminders`, { text: 'water plants', dueAt: inSeconds(3600) })).status).toBe(201);
    proxy.hang();
    expect((await call('PUT', `/v1/users/${user}/settings`, { digestTime: '07:30' })).status).toBe(503);
    await proxy.restore();
    expect((await call('POST', `/v1/users/${user}/reminders`, { text: 'water plants again', dueAt: inSeconds(7200) })).status).toBe(201);
    const schedule = await ctx.runtime.temporal.schedule.getHandle(digestScheduleId(ctx.userKey(user))).describe();
    expect(schedule.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 7, end: 7, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }] });
  });
});

describe('Temporal stops answering after the reminder start went out', () => {
  /**
   * Creates a reminder whose start is sent into a hung Temporal: an open transaction's lock on
   * the reminders table holds the API's insert, after Temporal answered the API and before the
   * start, while the proxy is hung.
   */
  async function createIntoHang(api: ProxiedApi, user: string, body: object) {
    const lock = await ctx.runtime.pool.connect();
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE reminders IN SHARE MODE');
      const answer = api.call('POST', `/v1/users/${user}/reminders`, body);
      const waiting = await poll(
        () =>
          ctx.runtime.pool
            .query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO reminders%'`)
            .then((r) => r.rows[0].n as number),
        (n) => n > 0,
        10_000,
        10,
      );
      expect(waiting).toBeGreaterThan(0);
      api.proxy.hang();
      await lock.query('ROLLBACK');
      return await answer;
    } finally {
      lock.release();
    }
  }

  it('answers 202 pending with the stored reminder; taken late or never, it fires exactly once', async () => {
    const user = `${ctx.prefix}-sent`;
    const userKey = ctx.userKey(user);
    const api = await proxiedApi();
    expect((await api.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);

    const late = await createIntoHang(api, user, { text: 'taken late', dueAt: inSeconds(12), requestId: 'late' });
    expect(late.status, JSON.stringify(late.body)).toBe(202);
    expect(late.body).toMatchObject({ text: 'taken late', status: 'scheduled', pending: true, workflowId: expect.stringMatching(/^reminder:/) });
    expect(late.ms).toBeLessThan(CALL_MS + SLACK_MS);
    await api.proxy.restore();
    const never = await createIntoHang(api, user, { text: 'never taken', dueAt: inSeconds(12), requestId: 'never' });
    expect(never.status, JSON.stringify(never.body)).toBe(202);
    expect(never.body.pending).toBe(true);
    await api.proxy.restore();

    // Both stand in the list, as the answer said.
    const listed = await api.call('GET', `/v1/users/${user}/reminders`);
    expect(listed.body.reminders.map((r: { id: string }) => r.id).sort()).toEqual([late.body.id, never.body.id].sort());

    // Temporal takes the first start after the deadline: the workflow under the row's id runs.
    const lateRow = (await ctx.runtime.deps.reminders.get({ userId: userKey, id: late.body.id })) as ReminderRecord;
    expect(await startReminderWorkflow({ temporal: ctx.runtime.temporal, taskQueue: ctx.taskQueue, config: ctx.runtime.config }, lateRow)).toBe('started');
    // The second start never lands: the reconciler starts it; the first is only marked, never started twice.
    const pass = await reconcileReminders({ reminders: ctx.runtime.deps.reminders, temporal: ctx.runtime.temporal, taskQueue: ctx.taskQueue, config: ctx.runtime.config }, { limit: 100, graceSeconds: 0 });
    expect(pass.started).toBe(1);
    expect(pass.failed).toBe(0);
    // A client retry of either create is the same reminder, not a second one.
    const retry = await api.call('POST', `/v1/users/${user}/reminders`, { text: 'never taken', dueAt: never.body.dueAt, requestId: 'never' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.id).toBe(never.body.id);

    for (const id of [late.body.id, never.body.id]) {
      const fired = await poll(() => ctx.runtime.deps.reminders.get({ userId: userKey, id }), (r) => (r?.fireCount ?? 0) >= 1, 40_000, 250);
      expect(fired).toMatchObject({ status: 'fired', fireCount: 1 });
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(await firings(userKey, late.body.id)).toBe(1);
    expect(await firings(userKey, never.body.id)).toBe(1);
  });
});

describe('digest written on request while Temporal stops answering', () => {
  it('answers 202 pending with the workflow id after WORKFLOW_WAIT_TIMEOUT_MS; the digest is written once Temporal and the worker are back', async () => {
    const user = `${ctx.prefix}-digest`;
    const api = await proxiedApi();
    expect((await api.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);
    await ctx.stopWorker();
    try {
      const answer = api.call('POST', `/v1/users/${user}/digests`);
      // The run exists (nobody works on it yet); then Temporal hangs while the API waits for it.
      const running = await poll(
        async () => {
          const found: string[] = [];
          for await (const w of ctx.runtime.temporal.workflow.list({ query: `TaskQueue = '${ctx.taskQueue}' AND WorkflowType = 'digestWorkflow'` })) found.push(w.workflowId);
          return found;
        },
        (ids) => ids.length > 0,
        15_000,
        100,
      );
      expect(running).toHaveLength(1);
      api.proxy.hang();
      const res = await answer;
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body).toEqual({ workflowId: running[0], pending: true });
      expect(res.ms).toBeLessThan(WAIT_MS + SLACK_MS + 1000);
    } finally {
      await api.proxy.restore();
      await ctx.startWorker();
    }
    const digests = await poll(() => api.call('GET', `/v1/users/${user}/digests?days=1`), (r) => r.body.digests?.length === 1, 30_000, 250);
    expect(digests.body.digests).toHaveLength(1);
  });
});
