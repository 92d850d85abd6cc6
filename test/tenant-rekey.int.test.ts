import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishVectorMoves, rekeyLegacyUsers } from '../src/adapters/postgres/tenant-rekey';
import { uuidFromKey } from '../src/shared/ids';
import { insertBulkMemories } from './support/bulk-memories';
import { createTestContext, type TestContext } from './support/harness';

// Upgrading a deployment from before tenants owned their users: rows keyed by the bare user id
// (external_id NULL) move to their owning tenant's (tenant, user) key, in every table, with their
// vectors, and the API then reaches them through that tenant's key only.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const vector = (seed: number) => Array.from({ length: 384 }, (_, i) => Math.sin(seed * 31 + i));

describe('legacy users move to (tenant, user) keys', () => {
  it('moves every row and vector of a legacy user to the owning tenant, once, and keeps users apart', async () => {
    const pool = ctx.runtime.pool;
    const legacy = `${ctx.prefix}-old`;
    const other = `${ctx.prefix}-old2`;
    const ids = { a: uuidFromKey(`${legacy}:a`), b: uuidFromKey(`${other}:b`) };
    for (const [user, tenant, id, text] of [
      [legacy, 'tenant-a', ids.a, 'I am allergic to legacy peanuts'],
      [other, 'tenant-b', ids.b, 'I live in legacy Lisbon'],
    ] as const) {
      await insertBulkMemories(pool, [{ id, userId: user, text, type: 'fact', status: 'active', importance: 0.8, importanceLevel: 'high', lastAccessedAt: new Date(), expiresAt: null }], tenant);
      // What a row from before tenancy looks like: no tenant-side id recorded.
      await pool.query('UPDATE users SET external_id = NULL WHERE user_id = $1', [user]);
      await pool.query(`INSERT INTO conversations (user_id, conversation_id, started_at, last_message_at) VALUES ($1, 'c1', now(), now())`, [user]);
      await ctx.runtime.deps.vectors.upsert({ userId: user, items: [{ id, embedding: vector(text.length), type: 'fact', createdAt: new Date().toISOString() }] });
    }

    const keyOf = (tenantId: string, userId: string) => ctx.runtime.subjects.userKey({ tenantId, userId });
    await rekeyLegacyUsers(pool, keyOf);
    const moved = await finishVectorMoves(pool, async (m) => {
      await ctx.runtime.deps.vectors.moveUser(m);
      await ctx.runtime.deps.episodeVectors!.moveUser(m);
    });
    expect(moved).toBe(2);

    // No table keeps a row under the old ids.
    const { rows: tables } = await pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'user_id' AND table_name <> 'legacy_user_moves'`,
    );
    for (const { table_name } of tables) {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table_name} WHERE user_id = ANY($1::text[])`, [[legacy, other]]);
      expect(rows[0].n, table_name).toBe(0);
    }
    const { rows: users } = await pool.query(`SELECT user_id, tenant_id, external_id FROM users WHERE external_id = ANY($1::text[]) ORDER BY external_id`, [[legacy, other]]);
    expect(users).toEqual([
      { user_id: keyOf('tenant-a', legacy), tenant_id: 'tenant-a', external_id: legacy },
      { user_id: keyOf('tenant-b', other), tenant_id: 'tenant-b', external_id: other },
    ]);

    // Each tenant's key reaches its own legacy user, with vectors in the new collection; the
    // other tenant's key reaches nobody's data under that id.
    const a = await ctx.call('POST', `/v1/users/${legacy}/recall`, { query: 'what am I allergic to?', routes: ['ann'] });
    expect(a.body.memories.map((m: { id: string }) => m.id)).toEqual([ids.a]);
    const stolen = await ctx.call('GET', `/v1/users/${other}/memories`);
    expect(stolen.body.memories).toEqual([]);

    // A second start finds nothing left to do.
    await rekeyLegacyUsers(pool, keyOf);
    expect(await finishVectorMoves(pool, async () => expect.fail('nothing should move twice'))).toBe(0);
    expect((await pool.query(`SELECT count(*)::int AS n FROM users WHERE external_id IS NULL`)).rows[0].n).toBe(0);
  });
});
