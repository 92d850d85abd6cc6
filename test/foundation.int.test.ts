import { ChromaClient } from 'chromadb';
import { userCollectionName } from '../src/adapters/chroma/user-collections';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, OTHER_TENANT_KEY, type TestContext } from './support/harness';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

describe('foundation: the real stack end to end', () => {
  it('reports every dependency healthy with its latency (to the operator)', async () => {
    const res = await ctx.call('GET', '/healthz', undefined, { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    for (const name of ['temporal', 'postgres', 'chroma', 'embedder']) {
      expect(res.body.checks[name].status, name).toBe('ok');
      expect(typeof res.body.checks[name].latencyMs).toBe('number');
    }
  });

  it('stores a memory through a workflow into PostgreSQL and Chroma, and recalls it only for its user', async () => {
    const alice = `${ctx.prefix}-alice`;
    const bob = `${ctx.prefix}-bob`;
    const created = await ctx.call('POST', `/v1/users/${alice}/memories`, { text: '我对花生过敏，吃了会起疹子', type: 'fact' });
    expect(created.status).toBe(201);
    const id = created.body.memory.id as string;
    expect(created.body.memory.status).toBe('active');
    // Temporal sees the pseudonymous user key, never the user's own id.
    const aliceKey = ctx.userKey(alice);
    expect(created.body.workflowId).toMatch(new RegExp(`^store:${aliceKey}:[a-z2-7]{16}$`));
    expect(created.body.workflowId).not.toContain(alice);

    // PostgreSQL row, scoped by (tenant, user).
    const { rows } = await ctx.runtime.pool.query('SELECT user_id, text FROM memories WHERE id = $1', [id]);
    expect(rows).toEqual([{ user_id: aliceKey, text: '我对花生过敏，吃了会起疹子' }]);

    // Chroma vector in alice's own collection, with user_id metadata; bob's collection does not exist.
    const stack = new URL(ctx.runtime.endpoints.chromaUrl);
    const chroma = new ChromaClient({ host: stack.hostname, port: Number(stack.port) });
    const collection = await chroma.getCollection({ name: userCollectionName(ctx.runtime.config.chroma.collection, aliceKey), embeddingFunction: null as never });
    const got = await collection.get({ ids: [id], include: ['metadatas', 'embeddings'] });
    expect(got.metadatas[0]).toMatchObject({ user_id: aliceKey, type: 'fact' });
    expect(got.embeddings[0]).toHaveLength(384);
    await expect(chroma.getCollection({ name: userCollectionName(ctx.runtime.config.chroma.collection, ctx.userKey(bob)), embeddingFunction: null as never })).rejects.toThrow();

    const mine = await ctx.call('POST', `/v1/users/${alice}/recall`, { query: '我有什么过敏的东西吗？' });
    expect(mine.status).toBe(200);
    expect(mine.body.memories.map((m: { id: string }) => m.id)).toContain(id);
    expect(mine.body.context.userPrefix).toContain('花生');
    expect(mine.body.error).toBeUndefined();

    const theirs = await ctx.call('POST', `/v1/users/${bob}/recall`, { query: '我有什么过敏的东西吗？' });
    expect(theirs.status).toBe(200);
    expect(theirs.body.memories).toEqual([]);
    expect(JSON.stringify(theirs.body.context)).not.toContain('花生');
  });

  it('finds the store workflow again by its MemoryUserId and MemoryTenant search attributes', async () => {
    const user = `${ctx.prefix}-carol`;
    const created = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I prefer tabs over spaces', type: 'preference' });
    expect(created.status).toBe(201);
    const who = await ctx.call('GET', `/v1/users/${user}`);
    expect(who.body).toMatchObject({ userId: user, tenantId: 'tenant-a', userKey: ctx.userKey(user) });
    let found: string[] = [];
    // Visibility is eventually consistent; poll briefly. The store is not the user's only workflow:
    // the write also rebuilds their persona, which carries the same attributes.
    for (let i = 0; i < 50 && !found.includes(created.body.workflowId); i++) {
      found = [];
      for await (const wf of ctx.runtime.temporal.workflow.list({ query: `${who.body.temporalQuery} AND MemoryTenant = 'tenant-a'` })) found.push(wf.workflowId);
      if (!found.includes(created.body.workflowId)) await new Promise((r) => setTimeout(r, 200));
    }
    expect(found).toContain(created.body.workflowId);
    expect(found.every((id) => id.includes(ctx.userKey(user)))).toBe(true);
    const description = await ctx.runtime.temporal.workflow.getHandle(created.body.workflowId).describe();
    expect(description.status.name).toBe('COMPLETED');
  });

  it('keeps the namespace retention at the audit promise, not the 24 h dev default', async () => {
    const ns = await ctx.runtime.temporal.connection.workflowService.describeNamespace({ namespace: ctx.runtime.config.temporal.namespace });
    const seconds = Number(ns.config?.workflowExecutionRetentionTtl?.seconds ?? 0);
    expect(seconds).toBe(ctx.runtime.config.temporal.retentionDays * 86_400);
  });

  it('refuses requests without a key or with an unknown key; another tenant’s key reaches another person', async () => {
    const user = `${ctx.prefix}-dave`;
    await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I live in Berlin', type: 'fact' });
    const none = await ctx.call('GET', `/v1/users/${user}/memories`, undefined, { authorization: '' });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('unauthorized');
    const wrong = await ctx.call('GET', `/v1/users/${user}/memories`, undefined, { authorization: 'Bearer nope-nope-nope' });
    expect(wrong.status).toBe(401);
    // Tenant B's user of the same id is somebody else, with nothing stored: no 403 that would
    // tell tenant B the id exists elsewhere, and none of tenant A's data.
    const other = await ctx.call('GET', `/v1/users/${user}/memories`, undefined, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    expect(other.status).toBe(200);
    expect(other.body.memories).toEqual([]);
    const otherRecall = await ctx.call('POST', `/v1/users/${user}/recall`, { query: 'Berlin' }, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    expect(otherRecall.status).toBe(200);
    expect(otherRecall.body.memories).toEqual([]);
    expect(JSON.stringify(otherRecall.body)).not.toContain('Berlin');
  });

  it('answers bad input with a 4xx and a machine-readable code, writing nothing', async () => {
    const user = `${ctx.prefix}-erin`;
    const malformed = await ctx.call('POST', `/v1/users/${user}/memories`, '{"text": "x", ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('malformed_json');
    const badType = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'x', type: 'gossip' });
    expect(badType.status).toBe(400);
    expect(badType.body.error.code).toBe('validation_failed');
    const control = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'bad\u0000text', type: 'fact' });
    expect(control.status).toBe(400);
    const oddUser = await ctx.call('POST', `/v1/users/${encodeURIComponent('../etc')}/memories`, { text: 'x', type: 'fact' });
    expect(oddUser.status).toBe(400);
    // Dates that cannot be: said in the future or before 1970, already expired.
    const hour = 3_600_000;
    for (const [field, body] of [
      ['at', { text: 'My locker code is 8765', type: 'fact', at: '9999-06-01T00:00:00Z' }],
      ['at', { text: 'My locker code is 8765', type: 'fact', at: new Date(Date.now() + hour).toISOString() }],
      ['at', { text: 'My locker code is 8765', type: 'fact', at: '1969-12-31T23:59:59Z' }],
      ['expiresAt', { text: 'My locker code is 8765', type: 'fact', expiresAt: '2001-01-01T00:00:00Z' }],
    ] as const) {
      const refused = await ctx.call('POST', `/v1/users/${user}/memories`, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('validation_failed');
      expect(JSON.stringify(refused.body.error)).toContain(field);
    }
    const futureMessage = await ctx.call('POST', `/v1/users/${user}/conversations/c-dates/messages`, { id: 'm1', role: 'user', content: 'hello', at: '9999-06-01T00:00:00Z' });
    expect(futureMessage.status).toBe(400);
    expect(futureMessage.body.error.code).toBe('validation_failed');
    const listed = await ctx.call('GET', `/v1/users/${user}/memories`);
    expect(listed.body.total).toBe(0);
  });

  it('serves an OpenAPI document', async () => {
    const res = await ctx.call('GET', '/openapi.json', undefined, { authorization: '' });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.paths)).toContain('/v1/users/{userId}/recall');
  });
});
