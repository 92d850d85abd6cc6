import { FakeListChatModel } from '@langchain/core/utils/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmQueryRewriter } from '../src/adapters/llm/query-rewriter';
import type { QueryRewriter } from '../src/core/ports/recall';
import { recall } from '../src/recall/recall';
import { createTestContext, type TestContext } from './support/harness';
import { seedMemories } from './support/seed';

// The optional LLM query rewrite against the real stores. No chat model runs offline, so the
// model is LangChain's scripted FakeListChatModel; everything it drives (the extra ANN and BM25
// searches, fusion, deadlines, error reporting) is the real path on PostgreSQL and Chroma.

let ctx: TestContext;
/** The seeded user's storage key: services take it; the HTTP path takes the tenant's own id. */
const user = () => ctx.userKey(`${ctx.prefix}-rw`);
const now = new Date('2026-06-02T00:00:00Z');
let camera: string;

beforeAll(async () => {
  ctx = await createTestContext();
  const ids = await seedMemories(ctx.runtime.deps, user(), [
    { text: '我在考虑买索尼 A7C2 相机，预算一万五以内', type: 'goal', importance: 0.6 },
    { text: '我喜欢周末去西湖边跑步', type: 'preference' },
    { text: '我对花生过敏', type: 'fact', importance: 0.9 },
    { text: '下周三要去杭州出差', type: 'event' },
  ]);
  camera = ids[0]!;
});
afterAll(async () => {
  await ctx?.close();
});

/** A rewriter over a scripted model that records how often it was asked. */
function scripted(responses: string[], sleep?: number): { rewriter: QueryRewriter; calls: () => number } {
  let calls = 0;
  const inner = new LlmQueryRewriter(new FakeListChatModel({ responses, sleep }));
  return {
    rewriter: {
      rewrite: (input) => {
        calls++;
        return inner.rewrite(input);
      },
    },
    calls: () => calls,
  };
}

const followUp = { query: '它大概多少钱来着？', recentMessages: ['你还记得我上次问你的事情吗'] };

describe('LLM query rewrite in recall', () => {
  it('is off by default: the model is never called on the hot path', async () => {
    const { rewriter, calls } = scripted(['{"queries": ["索尼 A7C2 相机价格"]}']);
    const r = await recall({ ...ctx.runtime.deps, queryRewriter: rewriter }, user(), followUp.query, { recentMessages: followUp.recentMessages, now });
    expect(calls()).toBe(0);
    expect(r.rewrittenQueries).toBeUndefined();
    expect(r.routes.map((x) => x.route)).not.toContain('rewrite');
  });

  it('finds what only the resolved query names, and says which queries it searched', async () => {
    const deps = ctx.runtime.deps;
    const plain = await recall(deps, user(), followUp.query, { recentMessages: followUp.recentMessages, now, routes: ['bm25'] });
    expect(plain.memories.map((m) => m.id)).not.toContain(camera);

    const { rewriter, calls } = scripted(['{"queries": ["索尼 A7C2 相机多少钱", "相机 预算", "它大概多少钱来着"]}']);
    const r = await recall({ ...deps, queryRewriter: rewriter }, user(), followUp.query, { ...followUp, now, routes: ['bm25'], rewrite: true });
    expect(calls()).toBe(1);
    expect(r.error).toBeUndefined();
    expect(r.rewrittenQueries).toEqual(['索尼 A7C2 相机多少钱', '相机 预算']);
    const found = r.memories.find((m) => m.id === camera);
    expect(found?.routes).toContain('rewrite');
    expect(r.context.userPrefix).toContain('索尼 A7C2');
    expect(r.routes.find((x) => x.route === 'rewrite')).toMatchObject({ ok: true });
  });

  it('runs the rewritten queries through ANN as well when that route is on, adding to the fused score', async () => {
    const deps = ctx.runtime.deps;
    const plain = await recall(deps, user(), followUp.query, { ...followUp, now, routes: ['ann'] });
    const { rewriter } = scripted(['{"queries": ["想买的相机和预算"]}']);
    const r = await recall({ ...deps, queryRewriter: rewriter }, user(), followUp.query, { ...followUp, now, routes: ['ann'], rewrite: true });
    expect(r.error).toBeUndefined();
    const before = plain.memories.find((m) => m.id === camera);
    const after = r.memories.find((m) => m.id === camera);
    expect(after?.routes).toEqual(['ann', 'rewrite']);
    expect(after!.score).toBeGreaterThan(before?.score ?? 0);
  });

  it('answers with the original results and a structured timeout when the model is too slow', async () => {
    const { rewriter } = scripted(['{"queries": ["索尼 A7C2"]}'], 4_000);
    const deps = { ...ctx.runtime.deps, queryRewriter: rewriter, config: { ...ctx.runtime.deps.config, recall: { ...ctx.runtime.deps.config.recall, rewriteTimeoutMs: 200 } } };
    const t0 = Date.now();
    const r = await recall(deps, user(), '索尼相机', { recentMessages: ['在看相机'], now, rewrite: true });
    // It returned without waiting for the model's reply (4 s away).
    expect(Date.now() - t0).toBeLessThan(3_500);
    expect(r.error).toMatchObject({ code: 'dependencyTimeout', routes: ['rewrite'] });
    expect(r.memories.map((m) => m.id)).toContain(camera);
    expect(r.routes.find((x) => x.route === 'rewrite')).toMatchObject({ ok: false });
  });

  it('reports an unusable model reply and keeps the original results', async () => {
    const { rewriter } = scripted(['当然！那台相机大约一万四千元。']);
    const r = await recall({ ...ctx.runtime.deps, queryRewriter: rewriter }, user(), '索尼相机', { now, rewrite: true });
    expect(r.error).toMatchObject({ code: 'llmUnavailable', routes: ['rewrite'] });
    expect(r.memories.map((m) => m.id)).toContain(camera);
  });

  it('says so when a rewrite is asked for and no LLM is configured, over HTTP too', async () => {
    const direct = await recall(ctx.runtime.deps, user(), '索尼相机', { now, rewrite: true });
    expect(direct.error).toMatchObject({ code: 'llmUnavailable', routes: ['rewrite'] });
    expect(direct.memories.map((m) => m.id)).toContain(camera);

    const res = await ctx.call('POST', `/v1/users/${ctx.prefix}-rw/recall`, { query: '索尼相机', now: now.toISOString(), rewrite: true });
    expect(res.status).toBe(200);
    expect(res.body.error).toMatchObject({ code: 'llmUnavailable' });
    expect(res.body.memories.map((m: { id: string }) => m.id)).toContain(camera);

    const bad = await ctx.call('POST', `/v1/users/${ctx.prefix}-rw/recall`, { query: '索尼相机', rewrite: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
  });
});
