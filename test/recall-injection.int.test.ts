import { describe, expect, it } from 'vitest';
import { EXCHANGES_HEADER, MEMORIES_HEADER } from '../src/core/recall/format';
import { recall } from '../src/recall/recall';
import { useTestContext } from './support/harness';

// Correctness, not latency, is tested here: a shared 2-core machine can make one e5 call slow.
const stack = useTestContext({ RECALL_TIMEOUT_MS: '20000' });

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function converse(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][], end = true): Promise<string[]> {
  const messages = lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 30) }));
  await stack.client.addMessages(user, conversation, messages);
  if (end) await stack.client.endConversation(user, conversation, { wait: true });
  return messages.map((m) => m.id);
}

const occurrences = (text: string, needle: string) => text.split(needle).length - 1;

describe('memories and past exchanges compete for the budget', () => {
  it('injects an exchange that answers a plain question, even when memories match the query too', async () => {
    const user = `${stack.ctx.prefix}-plain`;
    await converse(user, 'project', '2026-07-01T09:00:00Z', [
      ['user', 'My main project right now is ledger-sync, a Rust service that reconciles bank statements.'],
      ['assistant', 'Sounds interesting.'],
    ]);
    // A conversation still going on: its words are stored and searchable, nothing was extracted from it yet.
    const ids = await converse(user, 'dupes', '2026-07-03T09:00:00Z', [
      ['user', 'How does ledger-sync treat duplicate bank statement rows?'],
      ['assistant', 'ledger-sync hashes date, amount and counterparty of each row and keeps only the first row per hash.'],
    ], false);
    // Neither dated nor about what the assistant recommended, and a memory shares its words (so the
    // memory hits are not weak): the exchange is what answers.
    const r = await stack.client.recall(user, { query: 'how are duplicate rows handled in ledger-sync', now: '2026-07-20T10:00:00Z' });
    expect(r.error).toBeUndefined();
    expect(r.memories.some((m) => m.text.includes('ledger-sync'))).toBe(true);
    expect(r.memories.some((m) => m.text.includes('counterparty'))).toBe(false);
    expect(r.context.userPrefix).toContain('counterparty');
    expect(r.injectedMessageIds).toEqual(expect.arrayContaining(ids));
    expect(r.pastExchanges[0]!.messageIds).toEqual(ids);
    const prefix = r.context.userPrefix;
    expect(prefix.indexOf(MEMORIES_HEADER)).toBeLessThan(prefix.indexOf(EXCHANGES_HEADER));
    // Words the exchange does not contain do not bring it in.
    const unrelated = await stack.client.recall(user, { query: 'suggest a weekend hike', now: '2026-07-20T10:00:00Z' });
    expect(unrelated.context.userPrefix).not.toContain('counterparty');
  });

  it('does not inject a memory and the exchange it was taken from twice', async () => {
    const user = `${stack.ctx.prefix}-dup`;
    const ids = await converse(user, 'c1', '2026-06-28T10:00:00+08:00', [
      ['user', '顺便说一下，我对花生过敏，吃了会起疹子。'],
      ['assistant', '好的，我记住了，以后推荐食物会避开花生。'],
    ]);
    const r = await stack.client.recall(user, { query: '花生过敏', now: '2026-07-02T12:00:00+08:00' });
    expect(r.error).toBeUndefined();
    const memory = r.memories.find((m) => m.text.includes('花生'));
    expect(memory).toBeDefined();
    expect((memory!.source as { messageIds?: string[] }).messageIds).toContain(ids[0]);
    // The exchange search found the source exchange (it shares the words) and it was dropped as a duplicate.
    expect(r.routes.find((x) => x.route === 'exchange_bm25')?.hits).toBeGreaterThan(0);
    expect(r.injectedMessageIds).not.toContain(ids[0]);
    expect(occurrences(r.context.userPrefix, '起疹子')).toBe(1);

    // Asked about what was said, the exchange stays and carries the memory: still once, still listed.
    const past = await stack.client.recall(user, { query: '我之前说过我对什么过敏？', now: '2026-07-02T12:00:00+08:00' });
    expect(past.error).toBeUndefined();
    expect(occurrences(past.context.userPrefix, '起疹子')).toBe(1);
    expect(past.injectedMessageIds).toEqual(expect.arrayContaining(ids));
    expect(past.memories.map((m) => m.id)).toContain(memory!.id);
  });
});

describe('vague follow-ups pull the latest open pain point', () => {
  async function painPointId(user: string, needle: string): Promise<string> {
    const { rows } = await stack.ctx.runtime.pool.query<{ id: string }>(`SELECT id FROM memories WHERE user_id = $1 AND type = 'pain_point' AND text LIKE $2`, [stack.ctx.userKey(user), `%${needle}%`]);
    expect(rows, `a pain point mentioning ${needle}`).toHaveLength(1);
    return rows[0]!.id;
  }

  async function resolve(user: string, id: string, by: string): Promise<void> {
    await stack.ctx.runtime.deps.unitOfWork.forUser({
      userId: stack.ctx.userKey(user),
      work: async (tx) => void (await tx.memories.setStatus({ userId: stack.ctx.userKey(user), id, status: 'superseded', at: new Date('2026-06-20T00:00:00Z'), supersededBy: by })),
    });
  }

  it('zh: the newest open pain point and its last exchange lead, not an older or a resolved one', async () => {
    const user = `${stack.ctx.prefix}-fu-zh`;
    await converse(user, 'old', '2026-06-01T10:00:00+08:00', [['user', '最困扰我的是 payment-svc 每天晚上 9 点都会超时。'], ['assistant', '先看看晚上 9 点的批处理任务。']]);
    await converse(user, 'open', '2026-06-10T10:00:00+08:00', [
      ['user', '最困扰我的是 CI 构建每次都卡在 npm install 这一步。'],
      ['assistant', '可以先清一下 npm 缓存，再把 registry 换成内网镜像。'],
    ]);
    await converse(user, 'fixed', '2026-06-15T10:00:00+08:00', [['user', '最困扰我的是官网首页加载特别慢，要 8 秒。'], ['assistant', '先压缩首屏图片。']]);
    const open = await painPointId(user, 'npm install');
    await resolve(user, await painPointId(user, '官网首页'), open);

    for (const query of ['还是不行', '那个问题又出现了']) {
      const r = await recall(stack.ctx.runtime.deps, stack.ctx.userKey(user), query, { now: new Date('2026-06-21T10:00:00+08:00'), timeoutMs: 20_000 });
      expect(r.error, query).toBeUndefined();
      expect(r.followUp, query).toEqual({ memoryId: open });
      expect(r.memories[0]!.id, query).toBe(open);
      expect(r.context.userPrefix, query).toContain('内网镜像');
      expect(r.context.userPrefix, query).not.toContain('官网首页');
      expect(r.routes.map((x) => x.route), query).toContain('follow_up');
      // Under a tight budget only what the follow-up means fits; the older pain point does not.
      const tight = await recall(stack.ctx.runtime.deps, stack.ctx.userKey(user), query, { now: new Date('2026-06-21T10:00:00+08:00'), timeoutMs: 20_000, tokenBudget: 120 });
      expect(tight.context.userPrefix, query).toContain('npm');
      expect(tight.context.userPrefix, query).not.toContain('payment-svc');
    }
    // A query that names its thing is not a follow-up: ordinary retrieval answers it.
    const named = await recall(stack.ctx.runtime.deps, stack.ctx.userKey(user), 'payment-svc 还是超时', { now: new Date('2026-06-21T10:00:00+08:00'), timeoutMs: 20_000 });
    expect(named.followUp).toBeUndefined();
    expect(named.context.userPrefix).toContain('payment-svc');
  });

  it('en: the newest open pain point, also through the API', async () => {
    const user = `${stack.ctx.prefix}-fu-en`;
    await converse(user, 'old', '2026-06-01T10:00:00Z', [['user', 'My biggest problem is that the nightly backup job keeps failing.'], ['assistant', 'Check the disk quota on the backup host.']]);
    await converse(user, 'open', '2026-06-10T10:00:00Z', [
      ['user', 'My biggest problem right now is that the staging deploy keeps timing out.'],
      ['assistant', 'Raise the helm --timeout to 10m and split the migrations into their own job.'],
    ]);
    await converse(user, 'fixed', '2026-06-15T10:00:00Z', [['user', 'My biggest problem is that the VPN keeps disconnecting.'], ['assistant', 'Try the TCP profile.']]);
    const open = await painPointId(user, 'staging deploy');
    await resolve(user, await painPointId(user, 'VPN'), open);

    for (const query of ["it's happening again", 'any update on that?']) {
      const r = await stack.client.recall(user, { query, now: '2026-06-21T10:00:00Z' });
      expect(r.error, query).toBeUndefined();
      expect(r.memories[0]!.id, query).toBe(open);
      expect(r.context.userPrefix, query).toContain('helm --timeout');
      expect(r.context.userPrefix, query).not.toContain('VPN');
    }
  });
});
