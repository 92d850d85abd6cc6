import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPool } from '../src/adapters/postgres/pool';
import { PostgresUserRepository } from '../src/adapters/postgres/user-repository';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// A user's first requests often arrive together (a chat app sending the opening messages and a
// recall at once). Each of them registers the user; none may fail because another won the race.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

it('registers a user once when many first writes race, on every connection, without an error', async () => {
  // One connection per racer, so the inserts really run side by side in PostgreSQL.
  const racers = 16;
  const pool = createPool(ctx.runtime.endpoints.databaseUrl, racers);
  try {
    const users = new PostgresUserRepository(pool);
    await Promise.all(Array.from({ length: racers }, () => pool.query('SELECT 1')));
    for (let round = 0; round < 150; round++) {
      const externalId = `${ctx.prefix}-race${round}`;
      const user = { userKey: ctx.userKey(externalId), tenantId: 'tenant-a', externalId };
      const outcomes = await Promise.allSettled(Array.from({ length: racers }, () => users.ensure(user)));
      expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
      const { rows } = await pool.query('SELECT count(*)::int AS n FROM users WHERE tenant_id = $1 AND external_id = $2', ['tenant-a', externalId]);
      expect(rows[0].n).toBe(1);
    }
  } finally {
    await pool.end();
  }
});

it('answers every concurrent first message of a new user with 202 through the API', async () => {
  for (let round = 0; round < 10; round++) {
    const userId = `${ctx.prefix}-api${round}`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        fetch(`${ctx.baseUrl}/v1/users/${userId}/conversations/c1/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id: `m${i}`, role: 'user', content: `hello ${i}` }),
        }).then(async (r) => ({ status: r.status, body: await r.text() })),
      ),
    );
    expect(answers.filter((a) => a.status !== 202)).toEqual([]);
  }
  const { rows } = await ctx.runtime.pool.query('SELECT count(*)::int AS n FROM messages WHERE user_id = $1', [ctx.userKey(`${ctx.prefix}-api0`)]);
  expect(rows[0].n).toBe(6);
});

it('answers every kind of first request of a new user, sent all at once, without a server error', async () => {
  // A client that opens with everything at once: messages, a memory, a reminder, settings, recall,
  // search, a digest, the page token. Whatever order the server takes them in, each is answered
  // as if it had come alone (4xx for what is invalid for a new user, never 5xx).
  const due = new Date(Date.now() + 3_600_000).toISOString();
  const requests: [method: string, path: string, body?: unknown][] = [
    ['POST', 'conversations/c1/messages', { id: 'm1', role: 'user', content: '我对花生过敏' }],
    ['POST', 'conversations/c2/messages', { messages: [{ id: 'm1', role: 'user', content: 'I live in Berlin' }, { id: 'm2', role: 'assistant', content: 'Noted.' }] }],
    ['POST', 'memories', { text: 'Prefers tea over coffee', type: 'preference' }],
    ['POST', 'memories', { text: '喜欢爬山', type: 'preference' }],
    ['POST', 'reminders', { text: 'call mum', dueAt: due, timezone: 'Europe/Berlin' }],
    ['PUT', 'settings', { timezone: 'Asia/Shanghai' }],
    ['POST', 'recall', { query: 'what am I allergic to?' }],
    ['POST', 'conversations/search', { query: 'Berlin' }],
    ['POST', 'digests'],
    ['POST', 'page-token'],
    ['GET', 'memories'],
    ['GET', 'reminders'],
    ['GET', 'notifications'],
    ['GET', 'export'],
  ];
  for (let round = 0; round < 4; round++) {
    const userId = `${ctx.prefix}-all${round}`;
    // Twice each, so every kind of request also races with itself.
    const answers = await Promise.all(
      [...requests, ...requests].map(([method, path, body]) =>
        fetch(`${ctx.baseUrl}/v1/users/${userId}/${path}`, {
          method,
          headers: { authorization: `Bearer ${TEST_KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        }).then(async (r) => ({ method, path, status: r.status, body: (await r.text()).slice(0, 300) })),
      ),
    );
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const { rows } = await ctx.runtime.pool.query('SELECT count(*)::int AS n FROM users WHERE tenant_id = $1 AND external_id = $2', ['tenant-a', userId]);
    expect(rows[0].n).toBe(1);
  }
});
