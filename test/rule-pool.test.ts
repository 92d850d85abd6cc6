import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { INDEX_TASK_MAX_CHARS, INLINE_INDEX_MAX_CHARS, RulePool } from '../src/adapters/extraction/rule-pool';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { inlineRuleWork, messageIndexTerms, RuleWorkError, scanPage } from '../src/shared/rule-work';
import { loadConfig } from '../src/config';
import type { ConversationMessage } from '../src/core/types';
import { allConversationMessages, storeMessages } from '../src/conversation/conversation-messages';
import { conversationReminderRequests } from '../src/proactive/reminder-requests';
import { InMemoryConversationSide } from './support/conversation-fakes';

// Issue #20: the rule work of extraction on worker threads with a hard time limit per message.
// A message that overruns fails alone (its thread is replaced), the caller's event loop keeps
// turning meanwhile, and the rest of the page is still planned.

const SLOW_WORKER = fileURLToPath(new URL('./fixtures/slow-rule-worker.mjs', import.meta.url));
const SPIN = '\u27e6spin\u27e7';
const BREAK = '\u27e6break\u27e7';
const at = new Date('2026-11-30T09:00:00Z');
const msg = (id: string, content: string, role: 'user' | 'assistant' = 'user'): ConversationMessage => ({ id, role, content, at });

// Expensive for the patterns as they were when issue #20 was filed (src/core/time/reminder-request.ts).
const HOSTILE = `提醒我3${' '.repeat(3000)}`;

const real = new RulePool({ threads: 1, messageTimeoutMs: 3000, screenTimeoutMs: 10_000 });
const slow = new RulePool({ threads: 2, messageTimeoutMs: 2000, screenTimeoutMs: 10_000, filename: SLOW_WORKER });
afterAll(async () => {
  await Promise.all([real.close(), slow.close()]);
});

/** Counts the event loop's turns while `work` runs: a loop blocked by rule work would not turn. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ ticks: number; result: PromiseSettledResult<T>; ms: number }> {
  let ticks = 0;
  const t0 = performance.now();
  const timer = setInterval(() => ticks++, 50);
  const [result] = await Promise.allSettled([work]);
  clearInterval(timer);
  return { ticks, result, ms: performance.now() - t0 };
}

describe('rule pool', () => {
  it('plans a message on a worker thread as the rules do inline', async () => {
    const fact = { messages: [msg('m1', '我对花生过敏，吃了会起疹子。')], index: 0, timezone: 'Asia/Shanghai', withStatements: true };
    const pooled = await real.planMessage(fact);
    expect(pooled.candidates.map((c) => c.text)).toEqual((await inlineRuleWork.planMessage(fact)).candidates.map((c) => c.text));
    expect(pooled.candidates.some((c) => c.text.includes('花生过敏'))).toBe(true);
    // Dates survive the thread boundary as dates.
    expect(pooled.candidates[0]!.saidAt).toBeInstanceOf(Date);
    const reminder = { ...fact, messages: [msg('m2', '提醒我明天下午三点开会')] };
    const found = await real.planMessage(reminder);
    expect(found.reminders).toHaveLength(1);
    expect(found.reminders).toEqual((await inlineRuleWork.planMessage(reminder)).reminders);
  }, 60_000);

  it('a message that overruns its limit fails with a timeout while the event loop keeps turning', async () => {
    const { ticks, result, ms } = await ticksDuring(slow.planMessage({ messages: [msg('m1', `${HOSTILE}${SPIN}`)], index: 0, timezone: 'UTC', withStatements: true }));
    expect(result.status).toBe('rejected');
    const err = (result as PromiseRejectedResult).reason;
    expect(err).toBeInstanceOf(RuleWorkError);
    expect((err as RuleWorkError).reason).toBe('timeout');
    // The limit counts from the task's start; thread start-up under load adds seconds, not minutes.
    expect(ms).toBeLessThan(30_000);
    expect(ticks).toBeGreaterThan(Math.floor(2000 / 50) - 10);
    // The thread that overran was terminated; the pool answers the next task with a fresh one.
    const next = await slow.planMessage({ messages: [msg('m2', '我喜欢喝咖啡')], index: 0, timezone: 'UTC', withStatements: false });
    expect(next.candidates.map((c) => c.text)).toContain('我喜欢喝咖啡');
  }, 90_000);

  it('the input that froze the service is cut at the limit by the real rules too', async () => {
    const { result, ms } = await ticksDuring(real.planMessage({ messages: [msg('m1', HOSTILE)], index: 0, timezone: 'Asia/Shanghai', withStatements: true }));
    // Linear patterns answer in time (fulfilled); slow ones are cut at the limit: never minutes.
    if (result.status === 'rejected') expect((result.reason as RuleWorkError).reason).toBe('timeout');
    expect(ms).toBeLessThan(30_000);
  }, 90_000);

  it('a page scan fails only the messages that time out or throw; the others are planned', async () => {
    const messages = [
      msg('u1', '我对花生过敏'),
      msg('u2', `提醒我3${SPIN}`),
      msg('a1', '好的，我推荐你试试燕麦奶拿铁。', 'assistant'),
      msg('u3', `我住在上海${BREAK}`),
      msg('u4', '我喜欢喝咖啡'),
    ];
    const scan = await scanPage(slow, messages, 'Asia/Shanghai', true);
    expect(scan.failures.map((f) => [f.messageId, f.reason]).sort()).toEqual([
      ['u2', 'timeout'],
      ['u3', 'error'],
    ]);
    expect(scan.failures.find((f) => f.messageId === 'u3')!.detail).toContain('the rules broke');
    expect([...scan.plans.keys()].sort()).toEqual(['a1', 'u1', 'u4']);
    expect(scan.plans.get('u1')!.candidates.map((c) => c.text)).toContain('我对花生过敏');
  }, 90_000);

  it('the reminder requests of a whole conversation (the callers\' contract) come from the pool: a spinning message gives none and stalls nothing', async () => {
    const f = new InMemoryConversationSide();
    const userKey = 'tenant-a:pool-reminders';
    await f.users.ensure({ userKey, tenantId: 'tenant-a', externalId: 'carol' });
    await storeMessages(f.deps, {
      userKey,
      conversationId: 'c1',
      messages: [
        { id: 'r1', role: 'user', content: '提醒我明天下午三点开会', at, truncated: false },
        { id: 'r2', role: 'user', content: `提醒我3${SPIN}`, at, truncated: false },
      ],
      maxMessages: 10,
    });
    const { ticks, result } = await ticksDuring(conversationReminderRequests({ ...f.deps, config: loadConfig({ NODE_ENV: 'test' }), rules: slow }, (q) => allConversationMessages(f.deps, q), { userId: userKey, conversationId: 'c1' }));
    expect(result.status).toBe('fulfilled');
    const requests = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof conversationReminderRequests>>>).value;
    expect(requests.map((r) => r.source.messageId)).toEqual(['r1']);
    expect(ticks).toBeGreaterThan(Math.floor(2000 / 50) - 10);
  }, 90_000);

  it('segments a batch on its threads, in tasks of bounded size, into the postings the in-thread segmentation gives', async () => {
    const long = `我对花生过敏，想喝绿茶。${'green tea and peanuts '.repeat(Math.ceil(INDEX_TASK_MAX_CHARS / 22))}`;
    const texts = ['我对花生过敏，吃了会起疹子。', long, 'I like green tea, tea and more tea.', long.slice(0, 1000), ''];
    const before = real.completed.index;
    const pooled = await real.indexPostings({ texts });
    // The long text is a task of its own, the short ones around it share theirs.
    expect(real.completed.index - before).toBe(3);
    expect(pooled).toEqual(await inlineRuleWork.indexPostings({ texts }));
    const terms = messageIndexTerms(tokenizeForIndex(texts[2]!));
    expect(pooled[2]).toEqual({ terms: terms.map(([t]) => t), tfs: terms.map(([, tf]) => tf), docLength: terms.reduce((a, [, tf]) => a + tf, 0) });
    expect(pooled[4]).toEqual({ terms: [], tfs: [], docLength: 0 });
  }, 60_000);

  it("segments a batch of a chat turn's size on the calling thread, and one a character longer on the threads", async () => {
    const turn = ['我对花生过敏，吃了会起疹子。', 'Noted: no peanuts. '.repeat(10)];
    const filler = 'x'.repeat(INLINE_INDEX_MAX_CHARS - turn.join('').length);
    const atTheBound = [...turn, filler];
    const before = real.completed.index;
    expect(await real.indexPostings({ texts: atTheBound })).toEqual(await inlineRuleWork.indexPostings({ texts: atTheBound }));
    expect(real.completed.index).toBe(before);
    const past = [...turn, `${filler}x`];
    expect(await real.indexPostings({ texts: past })).toEqual(await inlineRuleWork.indexPostings({ texts: past }));
    expect(real.completed.index).toBe(before + 1);
  }, 60_000);

  it('a batch whose segmentation overruns its limit is refused with a timeout, its other tasks cancelled, while the event loop keeps turning', async () => {
    // One thread: the batch's other tasks wait in the queue behind the one that spins.
    const spinning = new RulePool({ threads: 1, messageTimeoutMs: 2000, screenTimeoutMs: 10_000, indexTimeoutMs: 2000, inlineIndexMaxChars: 0, filename: SLOW_WORKER });
    try {
      const filler = 'green tea '.repeat(INDEX_TASK_MAX_CHARS / 10);
      const { ticks, result } = await ticksDuring(spinning.indexPostings({ texts: [`我对花生过敏${SPIN}`, filler, filler, filler] }));
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(RuleWorkError);
      expect(((result as PromiseRejectedResult).reason as RuleWorkError).reason).toBe('timeout');
      expect(spinning.timeouts).toBe(1);
      expect(ticks).toBeGreaterThan(Math.floor(2000 / 50) - 10);
      // The next batch is answered by a fresh thread, and the refused batch's queued tasks never ran.
      expect(await spinning.indexPostings({ texts: ['我喜欢喝咖啡'] })).toEqual(await inlineRuleWork.indexPostings({ texts: ['我喜欢喝咖啡'] }));
      expect(spinning.completed.index).toBe(1);
    } finally {
      await spinning.close();
    }
  }, 90_000);

  it('closes with no thread left', async () => {
    const pool = new RulePool({ threads: 1, messageTimeoutMs: 5000, screenTimeoutMs: 5000 });
    await pool.planMessage({ messages: [msg('m1', '我喜欢喝咖啡')], index: 0, timezone: 'UTC', withStatements: false });
    expect(pool.threads).toBe(1);
    await pool.close();
    expect(pool.threads).toBe(0);
  }, 60_000);
});
