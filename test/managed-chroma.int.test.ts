import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { chromaClient, userCollectionName } from '../src/adapters/chroma/user-collections';
import { loadConfig } from '../src/config';
import { startStack } from '../src/stack';
import { createTestContext, type TestContext } from './support/harness';
import { startTokenProxy, type TokenProxy } from './support/token-proxy';

// A Chroma that wants a token, as Chroma Cloud or a Chroma behind an authenticating proxy does: the
// shared Chroma behind a proxy that answers 401 to any request without the right header.
const TOKEN = 'chroma-token-for-this-test-0123456789';
let proxy: TokenProxy;

beforeAll(async () => {
  proxy = await startTokenProxy(inject('stack').chromaUrl, { header: 'X-Chroma-Token', value: TOKEN });
});

afterAll(async () => {
  await proxy?.close();
});

/** The start of a process against the shared stack, its Chroma behind the proxy. */
function startAgainst(env: Record<string, string>) {
  const stack = inject('stack');
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    TEMPORAL_ADDRESS: stack.temporalAddress,
    DATABASE_URL: stack.databaseUrl,
    ...(stack.embeddingsUrl ? { EMBEDDINGS_URL: stack.embeddingsUrl } : {}),
    CHROMA_URL: proxy.url,
    ...env,
  });
  return startStack(config, { ephemeral: true });
}

describe('Chroma behind a token', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    proxy.expect('X-Chroma-Token', TOKEN);
    ctx = await createTestContext({ CHROMA_URL: proxy.url, CHROMA_AUTH_TOKEN: TOKEN, CHROMA_AUTH_HEADER: 'X-Chroma-Token' });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('writes the memories stored through the API to Chroma, and recall’s ANN route finds them there', async () => {
    const user = `${ctx.prefix}-token`;
    const created = await ctx.call('POST', `/v1/users/${user}/memories`, { text: '我对花生过敏，吃了会起疹子', type: 'fact' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.memory.id as string;

    // In Chroma itself, read past the proxy: the user's own collection holds the vector.
    const direct = chromaClient(inject('stack').chromaUrl);
    const collection = await direct.getCollection({ name: userCollectionName(ctx.runtime.config.chroma.collection, ctx.userKey(user)), embeddingFunction: null as never });
    const got = await collection.get({ ids: [id], include: ['metadatas'] });
    expect(got.metadatas[0]).toMatchObject({ user_id: ctx.userKey(user), type: 'fact' });

    const recalled = await ctx.call('POST', `/v1/users/${user}/recall`, { query: '我有什么过敏的东西吗？' });
    expect(recalled.body.error).toBeUndefined();
    expect(recalled.body.routes).toContainEqual(expect.objectContaining({ route: 'ann', ok: true, hits: 1 }));
    expect(recalled.body.memories.map((m: { id: string }) => m.id)).toContain(id);
    const health = await ctx.call('GET', '/healthz', undefined, { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` });
    expect(health.body.checks.chroma).toMatchObject({ status: 'ok' });
    expect(proxy.forwarded).toBeGreaterThan(0);
  });

  it('says the token was refused when it stops being accepted: recall names the failed ANN route, health shows Chroma down and why', async () => {
    const user = `${ctx.prefix}-rotated`;
    const created = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I live in Lisbon', type: 'fact' });
    expect(created.status).toBe(201);
    // The token is rotated at Chroma's side; this deployment still sends the old one.
    proxy.expect('X-Chroma-Token', 'the-new-token-nobody-told-us');
    try {
      const recalled = await ctx.call('POST', `/v1/users/${user}/recall`, { query: 'where do I live' });
      expect(recalled.status).toBe(200);
      expect(recalled.body.routes).toContainEqual(expect.objectContaining({ route: 'ann', ok: false }));
      expect(recalled.body.error).toMatchObject({ code: 'vectorStoreUnavailable', routes: expect.arrayContaining(['ann']) });
      expect(recalled.body.error.message).toMatch(/ann: Chroma query failed: unauthorised \(HTTP 401\): check CHROMA_AUTH_TOKEN and CHROMA_AUTH_HEADER/);
      // BM25 still answers from PostgreSQL.
      expect(recalled.body.memories.map((m: { id: string }) => m.id)).toContain(created.body.memory.id);

      const health = await ctx.call('GET', '/healthz', undefined, { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` });
      expect(health.status).toBe(503);
      expect(health.body.checks.chroma).toMatchObject({ status: 'down', error: expect.stringMatching(/unauthorised \(HTTP 401\): check CHROMA_AUTH_TOKEN/) });
    } finally {
      proxy.expect('X-Chroma-Token', TOKEN);
    }
  });
});

describe('the start-up readiness check of a Chroma behind a token', () => {
  it('sends the token, in the header CHROMA_AUTH_HEADER names', async () => {
    proxy.expect('X-Chroma-Token', TOKEN);
    const started = await startAgainst({ CHROMA_AUTH_TOKEN: TOKEN, CHROMA_AUTH_HEADER: 'X-Chroma-Token' });
    await started.stop();
    proxy.expect('Authorization', `Bearer ${TOKEN}`);
    const bearer = await startAgainst({ CHROMA_AUTH_TOKEN: TOKEN });
    await bearer.stop();
  });

  it('stops at once, naming the variables, when the token is missing or wrong', async () => {
    proxy.expect('Authorization', `Bearer ${TOKEN}`);
    const refusal = /Chroma at http:\/\/127\.0\.0\.1:\d+ \(CHROMA_URL\) could not be used: unauthorised \(HTTP 401\): check CHROMA_AUTH_TOKEN and CHROMA_AUTH_HEADER/;
    await expect(startAgainst({})).rejects.toThrow(refusal);
    await expect(startAgainst({ CHROMA_AUTH_TOKEN: 'a-wrong-token' })).rejects.toThrow(refusal);
    await expect(startAgainst({ CHROMA_AUTH_TOKEN: TOKEN, CHROMA_AUTH_HEADER: 'X-Chroma-Token' })).rejects.toThrow(refusal);
  });
});
