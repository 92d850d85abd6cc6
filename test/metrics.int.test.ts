import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// Issue #24 item 1 on the real stack: after a recall and an extraction, /metrics answers (to the
// operator only) with the recall, extraction, outbox, rate-limit and store series — and never
// with a user's id or key.

const OPERATOR = 'metrics-operator-token-0123456789';
const USER = 'metrics-user-7f3a';
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ CODEC_AUTH_TOKEN: OPERATOR, RATE_LIMIT_RECALL_PER_USER: '4' });
}, 120_000);
afterAll(async () => {
  await ctx?.close();
});

const scrape = (authorization?: string) => fetch(`${ctx.baseUrl}/metrics`, { headers: authorization ? { authorization } : {} });

/** The value of one sample line (`name{labels} value`), summed over every line matching `prefix`. */
function sum(text: string, prefix: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .reduce((acc, l) => acc + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('/metrics', () => {
  it('refuses a request without the operator token, and a tenant key', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape(`Bearer ${TEST_KEY}`)).status).toBe(401);
    const wrong = await scrape('Bearer not-the-operator-token-at-all');
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  it('answers with the series after an extraction and a recall', async () => {
    const sent = await ctx.call('POST', `/v1/users/${USER}/conversations/c1/messages`, {
      messages: [
        { id: 'm1', role: 'user', content: 'I am allergic to peanuts.' },
        { id: 'm2', role: 'user', content: 'My sister lives in Lisbon.' },
      ],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const ended = await ctx.call('POST', `/v1/users/${USER}/conversations/c1/end?wait=true`, {});
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const recalled = await ctx.call('POST', `/v1/users/${USER}/recall`, { query: 'what am I allergic to?' });
    expect(recalled.status, JSON.stringify(recalled.body)).toBe(200);
    // Spend the recall budget (4 per window): the next one is a 429.
    let status = 200;
    for (let i = 0; i < 6 && status !== 429; i++) status = (await ctx.call('POST', `/v1/users/${USER}/recall`, { query: 'peanuts' })).status;
    expect(status).toBe(429);

    const res = await scrape(`Bearer ${OPERATOR}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(sum(text, 'jarvis_recall_duration_seconds_count')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_recall_route_duration_seconds_count{route="bm25"')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_recall_route_duration_seconds_count{route="ann"')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_recall_context_tokens_count')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_extraction_runs_total{outcome="completed"}')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_extraction_decisions_total{action="create"}')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_rate_limit_rejections_total{budget="recall",scope="user"}')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_store_call_duration_seconds_count{store="postgres"')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_store_call_duration_seconds_count{store="chroma"')).toBeGreaterThan(0);
    expect(sum(text, 'jarvis_store_call_duration_seconds_count{store="embedder"')).toBeGreaterThan(0);
    // Read from PostgreSQL at scrape time: present, whatever their value.
    expect(text).toMatch(/^jarvis_outbox_depth\{state="pending"\} \d+$/m);
    expect(text).toMatch(/^jarvis_outbox_oldest_pending_seconds \d+(\.\d+)?$/m);
    expect(text).toMatch(/^jarvis_extraction_quarantined_messages \d+$/m);
    // No label holds who the traffic was for.
    expect(text).not.toContain(USER);
    expect(text).not.toContain(ctx.userKey(USER));
    expect(text).not.toContain('tenant-a');
  }, 120_000);
});
