import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// An erasure sent while the user's writes are still arriving: a write that commits a row after the
// purge emptied its table, before the `users` row goes, makes that delete fail on the foreign key.
// That error is the racing write's 409 `user_purged`, never the purge's: it deletes again and
// answers 200 with its counts.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

/** The purge's delete of the `users` row, waiting for a row lock a write holds. */
async function blockedUserDeletes(): Promise<number> {
  const { rows } = await ctx.runtime.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM users %'`,
  );
  return rows[0]!.n;
}

describe('an erasure racing the user\'s writes', () => {
  it('answers 200 with its counts every round, its workflow completes, and nothing written before it is left', async () => {
    for (let round = 0; round < 3; round++) {
      const user = `${ctx.prefix}-rw${round}`;
      const key = ctx.userKey(user);
      expect((await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'Allergic to peanuts', type: 'fact' })).status).toBe(201);
      expect((await ctx.call('POST', `/v1/users/${user}/conversations/c0/messages`, { id: 'm0', role: 'user', content: 'I moved to Lisbon last spring.' })).status).toBe(202);

      // One write in flight for certain: its row is inserted, not committed, when the purge empties
      // the conversations; its lock on the `users` row holds the purge's delete of it until it
      // commits, and the delete then finds the row it committed.
      const held = new pg.Client({ connectionString: ctx.runtime.endpoints.databaseUrl });
      await held.connect();
      try {
        await held.query('BEGIN');
        await held.query(`INSERT INTO conversations (user_id, conversation_id, started_at, last_message_at) VALUES ($1, 'held', now(), now())`, [key]);

        let stop = false;
        const answers: { path: string; status: number; code?: string; reason?: string }[] = [];
        const writer = (path: string, body: (n: number) => unknown) => async () => {
          for (let n = 0; !stop; n++) {
            const res = await ctx.call('POST', path, body(n));
            answers.push({ path, status: res.status, code: res.body?.error?.code, reason: res.body?.error?.details?.reason });
            // A user's writes are rate-limited: paced, they stay in flight instead of being refused.
            await new Promise((r) => setTimeout(r, 100));
          }
        };
        const writers = Promise.all([
          writer(`/v1/users/${user}/conversations/c1/messages`, (n) => ({ id: `p${n}`, role: 'user', content: `hello ${n}` }))(),
          writer(`/v1/users/${user}/reminders`, (n) => ({ text: `pill ${n}`, dueAt: inSeconds(86_400), timezone: 'UTC' }))(),
          writer(`/v1/users/${user}/memories`, (n) => ({ text: `My locker number is ${1000 + n}`, type: 'fact' }))(),
        ]);
        await new Promise((r) => setTimeout(r, 300));
        const purge = ctx.call('DELETE', `/v1/users/${user}?wait=true`);
        expect(await poll(blockedUserDeletes, (n) => n >= 1, 60_000, 20)).toBeGreaterThanOrEqual(1);
        await held.query('COMMIT');

        const erased = await purge;
        stop = true;
        await writers;
        expect(erased.status, JSON.stringify(erased.body)).toBe(200);
        expect(erased.body.result.counts.postgres).toMatchObject({ users: expect.any(Number), conversations: expect.any(Number) });
        expect(erased.body.result.counts.postgres.conversations).toBeGreaterThanOrEqual(2);
        const described = await ctx.runtime.temporal.workflow.getHandle(erased.body.workflowId, erased.body.runId).describe();
        expect(described.status.name).toBe('COMPLETED');

        // Every racing write got a service answer (stored and erased, 409 user_purged, a limit or
        // a dependency to retry later), never an internal error.
        const internal = answers.filter((a) => a.status === 500);
        expect(internal, JSON.stringify(internal.slice(0, 5))).toEqual([]);

        // What was written before the erasure is gone; a write stored after it is the id's new life.
        const { rows } = await ctx.runtime.pool.query(
          `SELECT (SELECT count(*)::int FROM conversations WHERE user_id = $1 AND conversation_id IN ('held', 'c0')) AS conversations,
                  (SELECT count(*)::int FROM messages WHERE user_id = $1 AND conversation_id = 'c0') AS messages,
                  (SELECT count(*)::int FROM memories WHERE user_id = $1 AND text = 'Allergic to peanuts') AS memories`,
          [key],
        );
        expect(rows[0]).toEqual({ conversations: 0, messages: 0, memories: 0 });
      } finally {
        await held.end();
      }
    }
  }, 300_000);
});
