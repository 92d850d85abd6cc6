import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from './support/harness';

// The real stack (Temporal, PostgreSQL, Chroma, the offline e5 server), issue #23 item 4: small
// talk never enters the context; a plain failure report is a pain point a vague follow-up finds;
// a reminder request is a reminder and no pain point.
const stack = useTestContext({ RECALL_TIMEOUT_MS: '30000' });
beforeAll(async () => {
  await stack.ctx.runtime.warmUp();
}, 120_000);

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function converse(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][]): Promise<void> {
  const messages = lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 30) }));
  await stack.client.addMessages(user, conversation, messages);
  await stack.client.endConversation(user, conversation, { wait: true });
}

async function memoriesOf(user: string): Promise<{ id: string; type: string; text: string }[]> {
  const { rows } = await stack.ctx.runtime.pool.query<{ id: string; type: string; text: string }>(`SELECT id, type, text FROM memories WHERE user_id = $1 AND status = 'active'`, [stack.ctx.userKey(user)]);
  return rows;
}

describe('small talk never enters the context (#23)', () => {
  it('after a small-talk-only conversation, "what do you know about me" injects none of it', async () => {
    const user = `${stack.ctx.prefix}-chat`;
    await converse(user, 'hello', '2026-06-01T10:00:00Z', [
      ['user', 'hey there!'],
      ['assistant', 'Hi! What can I do for you today?'],
      ['user', 'lol nothing, just asking'],
      ['assistant', 'No problem, I am here whenever you need me.'],
    ]);
    await converse(user, 'hallo-zh', '2026-06-02T10:00:00+08:00', [
      ['user', '哈哈没什么，就随便问问。'],
      ['assistant', '好的，有需要随时找我。'],
    ]);
    expect(await memoriesOf(user)).toEqual([]);
    for (const query of ['what do you know about me?', '你了解我什么？']) {
      const r = await stack.client.recall(user, { query, now: '2026-06-03T10:00:00Z' });
      expect(r.error, query).toBeUndefined();
      const context = `${r.context.system}\n${r.context.userPrefix}`;
      for (const said of ['just asking', 'hey there', '随便问问', 'whenever you need me']) expect(context, `${query} / ${said}`).not.toContain(said);
      expect(r.pastExchanges, query).toEqual([]);
    }
  });
});

describe('a problem stated as a plain report of a failure is a pain point (#23)', () => {
  for (const [lang, report, reply, query, needle] of [
    ['en', 'the checkout page keeps timing out', 'Raise the gateway timeout and check the payment provider latency.', 'is that thing fixed yet', 'checkout'],
    ['zh', '打印机一直卡纸', '先清理搓纸轮，换一包干燥的纸试试。', '那个东西修好了吗', '打印机'],
  ] as const) {
    it(`${lang}: "${report}" becomes a pain point and a later vague follow-up surfaces it`, async () => {
      const user = `${stack.ctx.prefix}-fail-${lang}`;
      await converse(user, 'report', '2026-06-01T10:00:00Z', [
        ['user', report],
        ['assistant', reply],
      ]);
      const pains = (await memoriesOf(user)).filter((m) => m.type === 'pain_point');
      expect(pains.map((p) => p.text).join(' | ')).toContain(needle);
      const r = await stack.client.recall(user, { query, now: '2026-06-04T10:00:00Z' });
      expect(r.error).toBeUndefined();
      expect(r.followUp).toEqual({ memoryId: pains[0]!.id });
      expect(r.context.userPrefix).toContain(needle);
    });
  }
});

describe('a request to the assistant is not a problem of the user (#23)', () => {
  it('"明天下午三点提醒我给妈妈打电话" makes a reminder and no pain point', async () => {
    const user = `${stack.ctx.prefix}-remind`;
    await converse(user, 'remind', '2026-06-01T10:00:00+08:00', [
      ['user', '明天下午三点提醒我给妈妈打电话。'],
      ['assistant', '好的，明天下午三点提醒你。'],
    ]);
    const { rows } = await stack.ctx.runtime.pool.query<{ n: string }>(`SELECT count(*) AS n FROM reminders WHERE user_id = $1`, [stack.ctx.userKey(user)]);
    expect(Number(rows[0]!.n)).toBe(1);
    expect((await memoriesOf(user)).filter((m) => m.type === 'pain_point')).toEqual([]);
  });
});
