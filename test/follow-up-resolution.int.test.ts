import { beforeAll, describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { detectFollowUp } from '../src/core/recall/follow-up';
import { useTestContext } from './support/harness';

// The real stack (Temporal, PostgreSQL, Chroma, the offline e5 server): a pain point said in one
// conversation, its end said in a later one, and a vague follow-up afterwards.
// Correctness, not latency: the first follow-up by meaning embeds the prototypes on a shared machine.
const stack = useTestContext({ RECALL_TIMEOUT_MS: '30000' });
// As the API and worker processes do at start: recall never waits for the follow-up prototypes.
beforeAll(async () => {
  await stack.ctx.runtime.warmUp();
}, 120_000);

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function converse(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][]): Promise<void> {
  const messages = lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 30) }));
  await stack.client.addMessages(user, conversation, messages);
  await stack.client.endConversation(user, conversation, { wait: true });
}

async function painPoint(user: string, needle: string): Promise<{ id: string; status: string; supersededBy: string | null }> {
  const { rows } = await stack.ctx.runtime.pool.query<{ id: string; status: string; superseded_by: string | null }>(
    `SELECT id, status, superseded_by FROM memories WHERE user_id = $1 AND type = 'pain_point' AND text LIKE $2`,
    [stack.ctx.userKey(user), `%${needle}%`],
  );
  expect(rows, `one pain point mentioning ${needle}`).toHaveLength(1);
  return { id: rows[0]!.id, status: rows[0]!.status, supersededBy: rows[0]!.superseded_by };
}

async function supersedeEvents(user: string, memoryId: string): Promise<string[]> {
  const { rows } = await stack.ctx.runtime.pool.query<{ reason: string }>(`SELECT reason FROM memory_events WHERE user_id = $1 AND memory_id = $2 AND action = 'superseded'`, [stack.ctx.userKey(user), memoryId]);
  return rows.map((r) => r.reason);
}

describe('a problem the user says is over is no longer what a vague follow-up means', () => {
  it('zh: "膝盖已经不疼了" resolves the knee, "那事儿后来怎么样了" then means the printer', async () => {
    const user = `${stack.ctx.prefix}-zh`;
    await converse(user, 'printer', '2026-06-01T10:00:00+08:00', [
      ['user', '最困扰我的是家里的打印机老是卡纸。'],
      ['assistant', '可以先清理一下搓纸轮，再换一包干燥的纸。'],
    ]);
    await converse(user, 'knee', '2026-06-05T10:00:00+08:00', [
      ['user', '最困扰我的是膝盖最近一直疼，爬楼梯的时候更明显。'],
      ['assistant', '先减少爬楼梯，必要时去看骨科。'],
    ]);
    const printer = await painPoint(user, '打印机');
    const knee = await painPoint(user, '膝盖');
    expect(knee.status).toBe('active');

    // Before the resolution, the newest open problem is the knee.
    const before = await stack.client.recall(user, { query: '那事儿后来怎么样了', now: '2026-06-08T10:00:00+08:00' });
    expect(before.error).toBeUndefined();
    expect(before.followUp).toEqual({ memoryId: knee.id });

    await converse(user, 'better', '2026-06-10T10:00:00+08:00', [
      ['user', '告诉你个好消息，膝盖已经不疼了。'],
      ['assistant', '太好了！'],
    ]);
    const resolved = await painPoint(user, '膝盖');
    expect(resolved.status).toBe('superseded');
    expect(await supersedeEvents(user, knee.id)).toEqual([expect.stringMatching(/over/)]);
    expect((await painPoint(user, '打印机')).status).toBe('active');

    // "那事儿后来怎么样了" is outside the word rules: the e5 net reads it.
    expect(detectFollowUp('那事儿后来怎么样了', jiebaSegmenter).referBack).toBe(false);
    for (const query of ['那事儿后来怎么样了', '还是不行']) {
      const r = await stack.client.recall(user, { query, now: '2026-06-12T10:00:00+08:00' });
      expect(r.error, query).toBeUndefined();
      expect(r.followUp, query).toEqual({ memoryId: printer.id });
      expect(r.memories[0]!.id, query).toBe(printer.id);
      expect(r.context.userPrefix, query).toContain('搓纸轮');
      expect(r.memories.some((m) => m.id === knee.id), query).toBe(false);
    }
  });

  it('en: "I fixed it, it works now" names nothing and resolves the latest problem; the older open one is surfaced', async () => {
    const user = `${stack.ctx.prefix}-en`;
    await converse(user, 'backup', '2026-06-01T10:00:00Z', [
      ['user', 'My biggest problem is that the nightly backup job keeps failing.'],
      ['assistant', 'Check the disk quota on the backup host.'],
    ]);
    await converse(user, 'wifi', '2026-06-05T10:00:00Z', [
      ['user', 'My biggest problem right now is that the wifi keeps dropping every evening.'],
      ['assistant', 'Move the router off channel 6 and update its firmware.'],
    ]);
    const backup = await painPoint(user, 'backup');
    const wifi = await painPoint(user, 'wifi');

    await converse(user, 'fixed', '2026-06-10T10:00:00Z', [
      ['user', 'Good news: I fixed it, it works now.'],
      ['assistant', 'Great to hear!'],
    ]);
    expect((await painPoint(user, 'wifi')).status).toBe('superseded');
    expect(await supersedeEvents(user, wifi.id)).toEqual([expect.stringMatching(/without naming it/)]);
    // Said once, it ends one problem, not every open one.
    expect((await painPoint(user, 'backup')).status).toBe('active');

    expect(detectFollowUp("your fix didn't work", jiebaSegmenter).referBack).toBe(false);
    for (const query of ["your fix didn't work", "it's happening again"]) {
      const r = await stack.client.recall(user, { query, now: '2026-06-12T10:00:00Z' });
      expect(r.error, query).toBeUndefined();
      expect(r.followUp, query).toEqual({ memoryId: backup.id });
      expect(r.context.userPrefix, query).toContain('disk quota');
      expect(r.context.userPrefix, query).not.toContain('channel 6');
    }

    // Then the backup is said to be sorted too, by name: nothing open is left to surface.
    await converse(user, 'backup-ok', '2026-06-14T10:00:00Z', [
      ['user', 'The backup job is fixed as well.'],
      ['assistant', 'Nice.'],
    ]);
    expect((await painPoint(user, 'backup')).status).toBe('superseded');
    const none = await stack.client.recall(user, { query: "it's happening again", now: '2026-06-15T10:00:00Z' });
    expect(none.followUp).toEqual({ memoryId: null });
  });

  it('new questions and small talk are not follow-ups, with a problem open', async () => {
    const user = `${stack.ctx.prefix}-neg`;
    await converse(user, 'p', '2026-06-01T10:00:00Z', [['user', 'My biggest problem is that my laptop overheats all the time.'], ['assistant', 'Clean the fans.']]);
    for (const query of ['recommend a movie', 'how do I make pancakes', 'thanks a lot']) {
      const r = await stack.client.recall(user, { query, now: '2026-06-03T10:00:00Z' });
      expect(r.followUp, query).toBeUndefined();
    }
  });
});
