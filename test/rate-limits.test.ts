import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installErrorHandling } from '../src/api/errors';
import { budgetsFor, installRateLimits, limitKey, recallBudgets, routeLimits, type RateLimits } from '../src/api/rate-limits';
import { loadConfig, type AppConfig } from '../src/config';
import { MemoryServiceError } from '../src/core/errors';

// The budget logic on its own (pure functions), then the real hooks and @fastify/rate-limit's
// store on a bare Fastify app with stand-in handlers and a fake clock: the limits as configured
// by default, without waiting out real minutes.

const withModel = { LLM_PROVIDER: 'openai-compatible', LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm' };
const u = '/v1/users/:userId';

describe('which budgets a request spends', () => {
  const config = loadConfig({});
  const table = routeLimits(config);

  it('recall spends the LLM budget exactly when the recall service will ask for a rewrite', () => {
    expect(recallBudgets({ query: 'hi' }, config)).toEqual(['recall']);
    expect(recallBudgets({ query: 'hi', rewrite: true }, config)).toEqual(['recall', 'llm']);
    expect(recallBudgets({ query: '   ', rewrite: true }, config)).toEqual(['recall']);
    const always = loadConfig({ ...withModel, RECALL_QUERY_REWRITE: 'always' });
    expect(recallBudgets({ query: 'hi' }, always)).toEqual(['recall', 'llm']);
    expect(recallBudgets({ query: 'hi', rewrite: false }, always)).toEqual(['recall']);
    const referential = loadConfig({ ...withModel, RECALL_QUERY_REWRITE: 'referential' });
    expect(recallBudgets({ query: 'what about that one?', recentMessages: ['I looked at two cameras'] }, referential)).toEqual(['recall', 'llm']);
    expect(recallBudgets({ query: 'what is my favourite food', recentMessages: ['hello'] }, referential)).toEqual(['recall']);
  });

  it('maps every route to its budgets; unknown writes spend `writes`, reads spend none', () => {
    expect(budgetsFor(table, 'POST', `${u}/recall`, { query: 'x' })).toEqual(['recall']);
    expect(budgetsFor(table, 'POST', `${u}/conversations/search`, { query: 'x' })).toEqual(['recall']);
    expect(budgetsFor(table, 'POST', `${u}/conversations/:conversationId/messages`, {})).toEqual(['writes']);
    expect(budgetsFor(table, 'POST', `${u}/conversations/:conversationId/end`, {})).toEqual(['writes', 'llm']);
    expect(budgetsFor(table, 'POST', `${u}/digests`, undefined)).toEqual(['writes', 'llm']);
    expect(budgetsFor(table, 'POST', `${u}/memories`, {})).toEqual(['writes', 'llm']);
    expect(budgetsFor(table, 'PUT', `${u}/settings`, {})).toEqual(['writes']);
    expect(budgetsFor(table, 'DELETE', `${u}/memories/:id`, undefined)).toEqual(['writes']);
    expect(budgetsFor(table, 'GET', `${u}/memories`, undefined)).toEqual([]);
    expect(budgetsFor(table, 'DELETE', `${u}/some-future-route`, undefined)).toEqual(['writes']);
    expect(budgetsFor(table, 'GET', '/healthz', undefined)).toEqual([]);
    expect(budgetsFor(table, 'POST', undefined, undefined)).toEqual([]);
  });

  it('sizes body limits per route: small for recall and settings, large for message batches', () => {
    expect(table[`POST ${u}/recall`]!.bodyLimit).toBe(1024 * 1024);
    expect(table[`PUT ${u}/settings`]!.bodyLimit).toBe(4096);
    expect(table[`POST ${u}/reminders/:id/snooze`]!.bodyLimit).toBe(4096);
    expect(table[`POST ${u}/conversations/:conversationId/messages`]!.bodyLimit).toBe(config.maxMessagesBodyBytes);
    expect(routeLimits(loadConfig({ MAX_MESSAGES_BODY_BYTES: '1048576' }))[`POST ${u}/conversations/:conversationId/messages`]!.bodyLimit).toBe(1024 * 1024);
  });

  it('keys counters by (tenant, user) and by a digest of the API key, never the key itself', () => {
    expect(limitKey.user('acme', 'alice')).not.toBe(limitKey.user('globex', 'alice'));
    expect(limitKey.user('acme', 'alice')).not.toBe(limitKey.tenant('acme'));
    const k = limitKey.apiKey('super-secret-key-123');
    expect(k).not.toContain('super-secret');
    expect(k).toBe(limitKey.apiKey('super-secret-key-123'));
    expect(k).not.toBe(limitKey.apiKey('super-secret-key-124'));
  });
});

const KEYS: Record<string, string> = { 'key-a': 'tenant-a', 'key-a2': 'tenant-a', 'key-b': 'tenant-b' };

/** The real limit hooks on a bare app whose handlers only answer; auth reduced to a key→tenant map. */
async function limitedApp(config: AppConfig): Promise<{ app: FastifyInstance; limits: RateLimits }> {
  const app = Fastify();
  installErrorHandling(app);
  const limits = await installRateLimits(app, config);
  app.addHook('onRequest', async (request) => {
    request.tenantId = KEYS[(request.headers.authorization ?? '').replace(/^Bearer /, '')];
  });
  const ok = async () => ({ ok: true });
  for (const path of ['/recall', '/conversations/search', '/conversations/:conversationId/messages', '/digests']) app.post(`/v1/users/:userId${path}`, ok);
  app.put('/v1/users/:userId/settings', ok);
  await app.ready();
  return { app, limits };
}

const send = (app: FastifyInstance, path: string, body: unknown, key = 'key-a', method: 'POST' | 'PUT' = 'POST') =>
  app.inject({ method, url: path, payload: body as object, headers: { authorization: `Bearer ${key}` } });

afterEach(() => {
  vi.useRealTimers();
});

describe('the default limits on the real hooks', () => {
  it('answer a burst of 300 concurrent recalls for one user with 429s, leaving other users and keys alone', async () => {
    const config = loadConfig({});
    const { app } = await limitedApp(config);
    const replies = await Promise.all(Array.from({ length: 300 }, () => send(app, '/v1/users/alice/recall', { query: 'hi' })));
    const refused = replies.filter((r) => r.statusCode === 429);
    expect(replies.filter((r) => r.statusCode === 200)).toHaveLength(config.rateLimits.perUser.recall);
    expect(refused).toHaveLength(300 - config.rateLimits.perUser.recall);
    const retryAfter = Number(refused[0]!.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(config.rateLimits.windowSeconds);
    expect(refused[0]!.json()).toEqual({
      error: {
        code: 'rate_limited',
        message: expect.stringContaining('recall'),
        details: { budget: 'recall', scope: 'user', limit: config.rateLimits.perUser.recall, windowSeconds: 60, retryAfterSeconds: retryAfter },
      },
    });
    // Conversation search shares the recall budget; writes have their own.
    expect((await send(app, '/v1/users/alice/conversations/search', { query: 'hi' })).statusCode).toBe(429);
    expect((await send(app, '/v1/users/alice/conversations/c1/messages', { id: 'm1' })).statusCode).toBe(200);
    expect((await send(app, '/v1/users/bob/recall', { query: 'hi' })).statusCode).toBe(200);
    expect((await send(app, '/v1/users/alice/recall', { query: 'hi' }, 'key-b')).statusCode).toBe(200);
    await app.close();
  });

  it('never refuse a person typing: a message a second for 30 messages, recall and search interleaved, rewrite on every message', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-06-01T08:00:00Z'));
    const config = loadConfig({ ...withModel, RECALL_QUERY_REWRITE: 'always' });
    // What the pace spends in one window, from the configuration: each second one recall (with
    // a rewrite), one search, the user's message and the assistant's reply.
    const perWindow = Math.min(30, config.rateLimits.windowSeconds);
    expect(2 * perWindow).toBeLessThanOrEqual(config.rateLimits.perUser.recall);
    expect(2 * perWindow).toBeLessThanOrEqual(config.rateLimits.perUser.writes);
    expect(perWindow).toBeLessThanOrEqual(config.rateLimits.perUser.llm);

    const { app } = await limitedApp(config);
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const conv = '/v1/users/typist/conversations/c1';
      statuses.add((await send(app, `/v1/users/typist/recall`, { query: `message ${i}` })).statusCode);
      statuses.add((await send(app, `/v1/users/typist/conversations/search`, { query: `message ${i}` })).statusCode);
      statuses.add((await send(app, `${conv}/messages`, { id: `u${i}` })).statusCode);
      statuses.add((await send(app, `${conv}/messages`, { id: `a${i}` })).statusCode);
      vi.setSystemTime(Date.now() + 1000);
    }
    expect([...statuses]).toEqual([200]);
    await app.close();
  });

  it('keep a sustained pace of a message every second for ten minutes under every budget', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-06-01T08:00:00Z'));
    const { app } = await limitedApp(loadConfig({}));
    let refused = 0;
    for (let i = 0; i < 600; i++) {
      for (const r of [
        await send(app, '/v1/users/chatty/recall', { query: `message ${i}` }),
        await send(app, '/v1/users/chatty/conversations/c1/messages', { id: `u${i}` }),
        await send(app, '/v1/users/chatty/conversations/c1/messages', { id: `a${i}` }),
      ])
        if (r.statusCode !== 200) refused++;
      vi.setSystemTime(Date.now() + 1000);
    }
    expect(refused).toBe(0);
    await app.close();
  });

  it('spend the LLM budget on LLM-backed calls only, and refill it after the window', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-06-01T08:00:00Z'));
    const config = loadConfig({ RATE_LIMIT_LLM_PER_USER: '3' });
    const { app } = await limitedApp(config);
    expect((await send(app, '/v1/users/ann/recall', { query: 'a', rewrite: true })).statusCode).toBe(200);
    expect((await send(app, '/v1/users/ann/digests', {})).statusCode).toBe(200);
    expect((await send(app, '/v1/users/ann/recall', { query: 'b', rewrite: true })).statusCode).toBe(200);
    const refused = await send(app, '/v1/users/ann/digests', {});
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.details).toMatchObject({ budget: 'llm', scope: 'user', limit: 3 });
    // A recall without a rewrite is not LLM-backed.
    expect((await send(app, '/v1/users/ann/recall', { query: 'c' })).statusCode).toBe(200);
    expect((await send(app, '/v1/users/ann/recall', { query: 'c', rewrite: true })).statusCode).toBe(429);
    vi.setSystemTime(Date.now() + config.rateLimits.windowSeconds * 1000);
    expect((await send(app, '/v1/users/ann/recall', { query: 'd', rewrite: true })).statusCode).toBe(200);
    await app.close();
  });

  it('count the per-key budget over all users of one API key, not over the tenant’s other keys', async () => {
    const { app } = await limitedApp(loadConfig({ RATE_LIMIT_WRITES_PER_KEY: '5', RATE_LIMIT_WRITES_PER_USER: '100' }));
    for (let i = 0; i < 5; i++) expect((await send(app, `/v1/users/user${i}/settings`, {}, 'key-a', 'PUT')).statusCode).toBe(200);
    const refused = await send(app, '/v1/users/user9/settings', {}, 'key-a', 'PUT');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.details).toMatchObject({ budget: 'writes', scope: 'key', limit: 5 });
    expect((await send(app, '/v1/users/user9/settings', {}, 'key-a2', 'PUT')).statusCode).toBe(200);
    await app.close();
  });

  it('turn a budget off with 0', async () => {
    const { app } = await limitedApp(loadConfig({ RATE_LIMIT_RECALL_PER_USER: '0', RATE_LIMIT_RECALL_PER_KEY: '0' }));
    const replies = await Promise.all(Array.from({ length: 300 }, () => send(app, '/v1/users/alice/recall', { query: 'hi' })));
    expect(replies.every((r) => r.statusCode === 200)).toBe(true);
    await app.close();
  });
});

describe('the new-user budget', () => {
  const request = (tenantId: string, userId: string) => ({ tenantId, params: { userId }, headers: {}, routeOptions: {} }) as unknown as FastifyRequest;

  it('admits a tenant’s first N new user ids per window, each id once however often or concurrently it comes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-06-01T08:00:00Z'));
    const config = loadConfig({ RATE_LIMIT_NEW_USERS_PER_TENANT: '3' });
    const { app, limits } = await limitedApp(config);
    await Promise.all(Array.from({ length: 20 }, () => limits.admitNewUser(request('tenant-a', 'same'))));
    await limits.admitNewUser(request('tenant-a', 'second'));
    await limits.admitNewUser(request('tenant-a', 'second'));
    await limits.admitNewUser(request('tenant-a', 'third'));
    const refusal = await limits.admitNewUser(request('tenant-a', 'fourth')).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(MemoryServiceError);
    expect((refusal as MemoryServiceError).code).toBe('rate_limited');
    expect((refusal as MemoryServiceError).context).toMatchObject({ budget: 'newUsers', scope: 'tenant', limit: 3, windowSeconds: 60 });
    // Already admitted ids and other tenants are unaffected.
    await limits.admitNewUser(request('tenant-a', 'same'));
    await limits.admitNewUser(request('tenant-b', 'fourth'));
    vi.setSystemTime(Date.now() + config.rateLimits.windowSeconds * 1000);
    await limits.admitNewUser(request('tenant-a', 'fourth'));
    await app.close();
  });
});
