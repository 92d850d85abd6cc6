import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RulePool } from '../src/adapters/extraction/rule-pool';
import type { MessagePlan, MessageTask, RuleWork } from '../src/shared/rule-work';
import { claimStaleConversations, extractRunPage } from '../src/conversation/extraction-runs';
import { createTestContext, type TestContext } from './support/harness';

// Issue #20 on the real stack: a hostile message from one user (expensive for the patterns of the
// day, and spinning for ever in the test worker whatever the patterns become) while another user's
// conversation is extracted and recalled in its normal time; the hostile message ends quarantined
// with its reason, later runs, the reconciler and a restarted worker skip it, and the rest of its
// conversation produces its memories.

const SLOW_WORKER = fileURLToPath(new URL('./fixtures/slow-rule-worker.mjs', import.meta.url));
const SPIN = '\u27e6spin\u27e7';
const BREAK = '\u27e6break\u27e7';
const HOSTILE = `提醒我3${' '.repeat(3000)}${SPIN}`;
const LIMIT_MS = 2500;

/** The test pool, counting which messages its threads were given. */
class CountingRules implements RuleWork {
  readonly planned: string[] = [];
  constructor(private readonly inner: RuleWork) {}
  planMessage(task: Omit<MessageTask, 'kind'>): Promise<MessagePlan> {
    this.planned.push(task.messages[task.index]!.id);
    return this.inner.planMessage(task);
  }
  screen: RuleWork['screen'] = (task) => this.inner.screen(task);
  indexPostings: RuleWork['indexPostings'] = (task) => this.inner.indexPostings(task);
  close = () => this.inner.close();
}

let ctx: TestContext;
let rules: CountingRules;
beforeAll(async () => {
  ctx = await createTestContext({ EXTRACTION_MESSAGE_TIMEOUT_MS: String(LIMIT_MS), RULE_POOL_THREADS: '2' });
  rules = new CountingRules(new RulePool({ threads: 2, messageTimeoutMs: LIMIT_MS, screenTimeoutMs: 4 * LIMIT_MS, filename: SLOW_WORKER }));
  // The activities read deps through a view, so the swap reaches them; runtime.close() closes it.
  ctx.runtime.deps.rules = rules;
});
afterAll(async () => {
  await ctx?.close();
});

async function post(user: string, conversation: string, messages: { id: string; content: string; role?: 'user' | 'assistant' }[]) {
  const res = await ctx.call('POST', `/v1/users/${user}/conversations/${conversation}/messages`, { messages: messages.map((m) => ({ role: 'user', ...m })) });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
}

async function endAndWait(user: string, conversation: string) {
  const t0 = performance.now();
  const res = await ctx.call('POST', `/v1/users/${user}/conversations/${conversation}/end?wait=true`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { ms: performance.now() - t0, result: res.body.result as { decisions: { action: string; text: string; messageIds: string[] }[] } };
}

async function recallTexts(user: string, query: string) {
  const t0 = performance.now();
  const res = await ctx.call('POST', `/v1/users/${user}/recall`, { query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { ms: performance.now() - t0, texts: (res.body.memories as { text: string }[]).map((m) => m.text) };
}

async function quarantineRows(user: string, conversation: string) {
  const { rows } = await ctx.runtime.pool.query<{ message_id: string; reason: string; detail: string; attempts: number; quarantined_at: Date | null }>(
    'SELECT message_id, reason, detail, attempts, quarantined_at FROM message_quarantine WHERE user_id = $1 AND conversation_id = $2',
    [ctx.userKey(user), conversation],
  );
  return rows;
}

async function healthz() {
  const t0 = performance.now();
  // The quarantine count is operator detail since /healthz went status-only for the public.
  const res = await fetch(`${ctx.baseUrl}/healthz`, { headers: { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` }, signal: AbortSignal.timeout(30_000) });
  return { ms: performance.now() - t0, body: (await res.json()) as { checks: Record<string, { quarantined?: number }> } };
}

describe('a hostile message is quarantined without stalling anyone', () => {
  const hostileUser = `${Date.now().toString(36)}-mallory`;
  const otherUser = `${Date.now().toString(36)}-bob`;

  it('another user is extracted and recalled in their normal time while it runs; the rest of its conversation is extracted', async () => {
    // Baseline, measured here on this machine's current load.
    await post(otherUser, 'c0', [{ id: 'b0', content: '我对花生过敏，吃了会起疹子。' }]);
    const baseEnd = await endAndWait(otherUser, 'c0');
    const baseRecall = await recallTexts(otherUser, '推荐个午餐');
    expect(baseRecall.texts.some((t) => t.includes('花生'))).toBe(true);

    await post(hostileUser, 'h1', [
      { id: 'm1', content: '我喜欢喝咖啡。' },
      { id: 'm2', content: HOSTILE },
      { id: 'm3', content: '好的，记住了。', role: 'assistant' },
      { id: 'm4', content: '我住在杭州。' },
    ]);
    await post(otherUser, 'c1', [{ id: 'b1', content: '我每天早上跑步五公里。' }]);
    const hostile = endAndWait(hostileUser, 'h1');
    // While the hostile message holds a thread, the other user's run and recall go on.
    const other = await endAndWait(otherUser, 'c1');
    const health = await healthz();
    const recall = await recallTexts(otherUser, '我的运动习惯');
    expect(recall.texts.some((t) => t.includes('跑步'))).toBe(true);
    // Generous bounds against this test's own baseline: a stalled loop would take the whole limit and more per retry, or minutes.
    expect(other.ms).toBeLessThan(Math.max(3 * baseEnd.ms, baseEnd.ms + 4 * LIMIT_MS));
    expect(recall.ms).toBeLessThan(Math.max(3 * baseRecall.ms, baseRecall.ms + 2000));
    expect(health.ms).toBeLessThan(5000);

    const { result } = await hostile;
    const decided = result.decisions.flatMap((d) => d.messageIds);
    expect(decided).toContain('m1');
    expect(decided).toContain('m4');
    expect(decided).not.toContain('m2');
    const rows = await quarantineRows(hostileUser, 'h1');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ message_id: 'm2', reason: 'timeout', attempts: 1 });
    expect(rows[0]!.detail).toContain(`${LIMIT_MS} ms`);
    expect(rows[0]!.quarantined_at).toBeInstanceOf(Date);
    // Kept, never deleted.
    const kept = await ctx.runtime.pool.query('SELECT content FROM messages WHERE user_id = $1 AND conversation_id = $2 AND message_id = $3', [ctx.userKey(hostileUser), 'h1', 'm2']);
    expect(kept.rows[0]?.content).toBe(HOSTILE);
    const mems = (await ctx.call('GET', `/v1/users/${hostileUser}/memories?status=active&limit=50`)).body.memories as { text: string }[];
    expect(mems.map((m) => m.text).join('|')).toMatch(/咖啡[\s\S]*杭州|杭州[\s\S]*咖啡/u);
    expect((await healthz()).body.checks.extractionQuarantine?.quarantined).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it('a second run and the reconciler skip it; a restarted worker re-extracting the conversation does not stall on it', async () => {
    const userId = ctx.userKey(hostileUser);
    // A second run over the whole conversation: the quarantined message is never given to a thread.
    rules.planned.length = 0;
    const page = await extractRunPage(ctx.runtime.deps, { userId, conversationId: 'h1', afterSeq: 0, limit: 50 }, { attemptId: 'test/second-run', heartbeat: () => {} });
    expect(rules.planned).not.toContain('m2');
    expect(rules.planned).toEqual(expect.arrayContaining(['m1', 'm4']));
    expect(page.messages.map((m) => m.id)).not.toContain('m2');
    expect(page.quarantined).toEqual([]);
    // The watermark went past it: the reconciler finds nothing to restart.
    const stale = await claimStaleConversations(ctx.runtime.deps, { idleSeconds: 0, limit: 100 });
    expect(stale.filter((s) => s.userId === userId)).toEqual([]);

    // As after a crash before the watermark moved: the restarted worker extracts the conversation again.
    await ctx.runtime.pool.query('UPDATE conversations SET extracted_seq = 0 WHERE user_id = $1', [userId]);
    await ctx.runtime.pool.query('DELETE FROM extraction_pages WHERE user_id = $1', [userId]);
    await ctx.stopWorker();
    await ctx.startWorker();
    rules.planned.length = 0;
    const again = await endAndWait(hostileUser, 'h1');
    expect(rules.planned).not.toContain('m2');
    // No thread ran out of its limit this time: the run did not wait on the hostile message.
    expect(again.ms).toBeLessThan(60_000);
    const rows = await quarantineRows(hostileUser, 'h1');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.attempts).toBe(1);
  }, 300_000);

  it('a message whose rules throw is tried again once, then quarantined with the error; its neighbours are extracted', async () => {
    await post(hostileUser, 'h2', [
      { id: 'e1', content: '我喜欢爬山。' },
      { id: 'e2', content: `我养了一只猫${BREAK}` },
    ]);
    const { result } = await endAndWait(hostileUser, 'h2');
    expect(result.decisions.flatMap((d) => d.messageIds)).toContain('e1');
    const rows = await quarantineRows(hostileUser, 'h2');
    expect(rows).toHaveLength(1);
    // EXTRACTION_QUARANTINE_AFTER_ERRORS=2: the first failure retried the page, the second held the message.
    expect(rows[0]).toMatchObject({ message_id: 'e2', reason: 'error', attempts: 2 });
    expect(rows[0]!.detail).toContain('the rules broke');
  }, 300_000);
});
