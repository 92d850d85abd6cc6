import pg from 'pg';
import { ChromaClient } from 'chromadb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// Writes for a user racing their erasure (DELETE /v1/users/{userId}): each is answered at once —
// done before the purge, or 409 `conflict` with `details.reason: "user_purged"` — and nothing of
// the user outlives the purge, in PostgreSQL, Chroma or Temporal.

let ctx: TestContext;
let chroma: ChromaClient;
beforeAll(async () => {
  ctx = await createTestContext();
  const u = new URL(ctx.runtime.endpoints.chromaUrl);
  chroma = new ChromaClient({ host: u.hostname, port: Number(u.port) });
});
afterAll(async () => {
  await ctx?.close();
});

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

async function rowsOf(userKey: string): Promise<Record<string, number>> {
  const { rows: tables } = await ctx.runtime.pool.query<{ table_name: string }>(
    `SELECT DISTINCT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'user_id' AND table_name <> 'user_data_keys'`,
  );
  const out: Record<string, number> = {};
  for (const { table_name: table } of tables) {
    const { rows } = await ctx.runtime.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [userKey]);
    if (rows[0].n > 0) out[table] = rows[0].n;
  }
  return out;
}

async function runningOf(userKey: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of ctx.runtime.temporal.workflow.list({ query: `MemoryUserId = '${userKey}' AND ExecutionStatus = 'Running'` })) ids.push(`${e.type}:${e.workflowId}`);
  return ids;
}

/** Backends waiting for an advisory lock (the user's write lock is one). */
async function lockWaiters(): Promise<number> {
  const { rows } = await ctx.runtime.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return rows[0]!.n;
}

function within<T>(p: Promise<T>, ms: number): Promise<T | { status: 'still waiting' }> {
  return Promise.race([p, new Promise<{ status: 'still waiting' }>((resolve) => setTimeout(() => resolve({ status: 'still waiting' }), ms))]);
}

describe('writes racing a purge', () => {
  it('a write that reaches the user after their rows are gone answers 409 user_purged at once, and no workflow, row or vector of the user survives', async () => {
    const user = `${ctx.prefix}-race`;
    const key = ctx.userKey(user);
    expect((await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'Allergic to peanuts', type: 'fact' })).status).toBe(201);
    expect((await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm0', role: 'user', content: 'I moved to Lisbon last spring and I have a dog named Rex.' })).status).toBe(202);

    // The purge's last pass waits for the user's write lock, held here from the end of its first
    // pass: the writes below start after it listed the user's workflows and before it deletes
    // the rows, the moment a request racing an erasure meets it.
    const holder = new pg.Client({ connectionString: ctx.runtime.endpoints.databaseUrl });
    await holder.connect();
    const vectors = ctx.runtime.deps.vectors;
    let held = false;
    ctx.runtime.deps.vectors = new Proxy(vectors, {
      get(target, prop) {
        if (prop === 'dropUser') {
          return async (userKey: string) => {
            if (userKey === key && !held) {
              held = true;
              await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 42))', [key]);
            }
            return target.dropUser(userKey);
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    try {
      const purge = ctx.call('DELETE', `/v1/users/${user}?wait=true`);
      expect(await poll(lockWaiters, (n) => n >= 1, 60_000, 50)).toBeGreaterThanOrEqual(1);

      const started = Date.now();
      const timed = (p: Promise<{ status: number; body: any }>) => within(p.then((r) => ({ ...r, ms: Date.now() - started })), 40_000);
      const stored = timed(ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I prefer tea to coffee', type: 'preference', requestId: 'race-1' }));
      const appended = timed(ctx.call('POST', `/v1/users/${user}/conversations/c2/messages`, { id: 'm1', role: 'user', content: 'I adopted two cats, Miso and Tofu.' }));
      const ended = appended.then(() => timed(ctx.call('POST', `/v1/users/${user}/conversations/c2/end?wait=true`, {})));
      const reminded = timed(ctx.call('POST', `/v1/users/${user}/reminders`, { text: 'gym', dueAt: inSeconds(3600), timezone: 'UTC' }));
      // The store's decision and the extraction's queue on the lock behind the purge.
      await poll(lockWaiters, (n) => n >= 3, 20_000, 50);
      await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 42))', [key]);
      const released = Date.now();

      const erased = await within(purge, 60_000);
      expect('body' in erased && erased.status, JSON.stringify(erased)).toBe(200);
      const answers = { stored: await stored, ended: await ended, reminded: await reminded, appended: await appended };
      const seen = JSON.stringify(answers);
      // Racing the last pass, the writes that waited for the user's lock find the user gone.
      for (const name of ['stored', 'ended'] as const) {
        const a = answers[name];
        expect('body' in a && a.status, seen).toBe(409);
        expect('body' in a && a.body.error, seen).toMatchObject({ code: 'conflict', details: { reason: 'user_purged' } });
        expect('ms' in a && a.ms - (released - started), seen).toBeLessThan(10_000);
      }
      // The reminder and the message were written before the last pass, which erased them.
      expect('body' in answers.reminded && answers.reminded.status, seen).toBe(201);
      expect('body' in answers.appended && answers.appended.status, seen).toBe(202);

      // Nothing of the user is left: no workflow still running (a reminder's timer, a
      // conversation's idle timer started in the race), no row, no collection.
      expect(await poll(() => runningOf(key), (r) => r.length === 0, 20_000, 500)).toEqual([]);
      expect(await rowsOf(key)).toEqual({});
      const owned = (await chroma.listCollections({ limit: 10_000 })).filter((c) => c.metadata?.user_id === key);
      expect(owned.map((c) => c.name)).toEqual([]);
    } finally {
      ctx.runtime.deps.vectors = vectors;
      await holder.end();
    }
  }, 180_000);
});
