import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function converse(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][]) {
  const res = await ctx.call('POST', `/v1/users/${user}/conversations/${conversation}/messages`, {
    messages: lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 20) })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res;
}

async function end(user: string, conversation: string) {
  const res = await ctx.call('POST', `/v1/users/${user}/conversations/${conversation}/end?wait=true`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { workflowId: string; result: { counts: Record<string, number>; decisions: { action: string; memoryId?: string; affectedIds: string[]; text: string; type: string; reason: string; messageIds: string[] }[] } };
}

async function active(user: string) {
  const res = await ctx.call('GET', `/v1/users/${user}/memories?status=active&limit=200`);
  return res.body.memories as { id: string; text: string; type: string; frequencyCount: number; source: { messageIds: string[]; conversationId: string } }[];
}

describe('ExtractMemories on the real stack', () => {
  it('turns a Chinese conversation into typed memories with provenance', async () => {
    const user = `${ctx.prefix}-zh`;
    await converse(user, 'c1', '2026-06-28T10:00:00+08:00', [
      ['user', '顺便说一下，我对花生过敏，吃了会起疹子。'],
      ['assistant', '好的，我记住了。'],
      ['user', '我的目标是年底前把 payment-svc 的 P99 延迟降到 50ms 以下。'],
      ['user', '最困扰我的是 payment-svc 每天晚上 9 点都会超时，真的很急。'],
      ['user', '哈哈，谢谢'],
    ]);
    const ended = await end(user, 'c1');
    expect(ended.workflowId).toBe(ctx.extractWorkflowId(user, 'c1'));
    const memories = await active(user);
    const types = new Set(memories.map((m) => m.type));
    expect(types).toContain('goal');
    expect(types).toContain('pain_point');
    const allergy = memories.find((m) => m.text.includes('花生'));
    expect(allergy).toBeDefined();
    expect(allergy!.source.conversationId).toBe('c1');
    expect(allergy!.source.messageIds).toEqual(['c1-m1']);
    expect(memories.some((m) => m.text.includes('哈哈'))).toBe(false);
  });

  it('turns an English conversation into typed memories, and a repeated fact reinforces instead of duplicating', async () => {
    const user = `${ctx.prefix}-en`;
    await converse(user, 'c1', '2026-03-10T18:00:00Z', [
      ['user', 'I work as a nurse and I live in Lisbon.'],
      ['user', 'I love hiking on weekends.'],
      ['assistant', 'Nice!'],
    ]);
    await end(user, 'c1');
    const before = await active(user);
    const hiking = before.find((m) => /hiking/i.test(m.text));
    expect(hiking).toBeDefined();

    await converse(user, 'c2', '2026-03-20T18:00:00Z', [['user', 'I love hiking on weekends.']]);
    const second = await end(user, 'c2');
    expect(second.result.decisions.map((d) => d.action)).toContain('reinforce');
    const after = await active(user);
    expect(after.filter((m) => /hiking/i.test(m.text))).toHaveLength(1);
    expect(after.find((m) => m.id === hiking!.id)!.frequencyCount).toBe(2);
  });

  it('"我现在可以吃花生了" supersedes "我对花生过敏", and the history shows both decisions', async () => {
    const user = `${ctx.prefix}-sup`;
    await converse(user, 'c1', '2026-05-01T09:00:00+08:00', [['user', '我对花生过敏，这个很重要。']]);
    await end(user, 'c1');
    const old = (await active(user)).find((m) => m.text.includes('对花生过敏'))!;
    expect(old).toBeDefined();

    await converse(user, 'c2', '2026-07-01T09:00:00+08:00', [['user', '好消息，脱敏治疗结束了，我现在可以吃花生了。']]);
    const ended = await end(user, 'c2');
    const sup = ended.result.decisions.find((d) => d.action === 'supersede');
    expect(sup, JSON.stringify(ended.result.decisions)).toBeDefined();
    expect(sup!.affectedIds).toContain(old.id);

    const now = await active(user);
    expect(now.some((m) => m.id === old.id)).toBe(false);
    expect(now.some((m) => m.text.includes('可以吃花生'))).toBe(true);

    const oldView = await ctx.call('GET', `/v1/users/${user}/memories/${old.id}`);
    expect(oldView.body.memory.status).toBe('superseded');
    expect(oldView.body.memory.supersededBy).toBe(sup!.memoryId);
    const newView = await ctx.call('GET', `/v1/users/${user}/memories/${sup!.memoryId}`);
    expect(newView.body.memory.supersedes).toBe(old.id);

    const history = await ctx.call('GET', `/v1/users/${user}/memories/${old.id}/history`);
    const actions = history.body.events.map((e: { action: string }) => e.action);
    expect(actions).toEqual(['create', 'superseded']);
    const superseded = history.body.events[1];
    expect(superseded.workflowId).toBe(ctx.extractWorkflowId(user, 'c2'));
    expect(superseded.runId).toBeTruthy();
    expect(superseded.conversationId).toBe('c2');
    expect(superseded.messageIds).toEqual(['c2-m1']);
    expect(superseded.before.status).toBe('active');
    expect(superseded.after.status).toBe('superseded');
  });

  it('"忘掉我的…" expires the memory', async () => {
    const user = `${ctx.prefix}-forget`;
    await converse(user, 'c1', '2026-05-01T09:00:00+08:00', [['user', '我住在杭州西湖区。']]);
    await end(user, 'c1');
    const home = (await active(user)).find((m) => m.text.includes('杭州'))!;
    expect(home).toBeDefined();
    await converse(user, 'c2', '2026-05-02T09:00:00+08:00', [['user', '请忘掉我住在杭州这件事。']]);
    const ended = await end(user, 'c2');
    expect(ended.result.decisions.map((d) => d.action)).toContain('forget');
    const view = await ctx.call('GET', `/v1/users/${user}/memories/${home.id}`);
    expect(view.body.memory.status).toBe('expired');
    const recall = await ctx.call('POST', `/v1/users/${user}/recall`, { query: '我住在哪里' });
    expect(JSON.stringify(recall.body.context)).not.toContain('杭州');
  });

  it('ending the same conversation twice never duplicates memories', async () => {
    const user = `${ctx.prefix}-twice`;
    await converse(user, 'c1', '2026-05-01T09:00:00Z', [['user', 'I have a dog named Biscuit.']]);
    await end(user, 'c1');
    const first = await active(user);
    const again = await end(user, 'c1');
    expect(again.result.decisions.every((d) => (d as unknown as { replayed: boolean }).replayed)).toBe(true);
    expect(await active(user)).toHaveLength(first.length);
  });

  it('two concurrent conversations of one user stating the same fact yield one memory', async () => {
    const user = `${ctx.prefix}-race`;
    await converse(user, 'a', '2026-05-01T09:00:00Z', [['user', 'I am allergic to shellfish.']]);
    await converse(user, 'b', '2026-05-01T09:00:05Z', [['user', 'I am allergic to shellfish.']]);
    const [ra, rb] = await Promise.all([end(user, 'a'), end(user, 'b')]);
    const actions = [...ra.result.decisions, ...rb.result.decisions].filter((d) => /shellfish/i.test(d.text)).map((d) => d.action).sort();
    expect(actions).toEqual(['create', 'reinforce']);
    expect((await active(user)).filter((m) => /shellfish/i.test(m.text))).toHaveLength(1);
  });

  it('refuses bad conversation input with a 4xx and writes nothing', async () => {
    const user = `${ctx.prefix}-bad`;
    const path = `/v1/users/${user}/conversations/c1/messages`;
    expect((await ctx.call('POST', path, { messages: [] })).status).toBe(400);
    expect((await ctx.call('POST', path, { id: 'm1', role: 'system', content: 'x' })).status).toBe(400);
    expect((await ctx.call('POST', path, { id: 'm1', role: 'user', content: 'x'.repeat(8001) })).status).toBe(400);
    expect((await ctx.call('POST', path, { id: 'm1', role: 'user', content: 'bad \u0007 bell' })).status).toBe(400);
    expect((await ctx.call('POST', path, { id: 'm1', role: 'user', content: '   ' })).status).toBe(400);
    const invalidUtf8 = await fetch(`${ctx.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-key-tenant-a', 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"id":"m1","role":"user","content":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    });
    expect(invalidUtf8.status).toBe(400);
    expect((await ctx.call('POST', `/v1/users/${user}/conversations/nope/end`, {})).status).toBe(404);
    const { rows } = await ctx.runtime.pool.query('SELECT count(*)::int AS n FROM messages WHERE user_id = $1', [ctx.userKey(user)]);
    expect(rows[0].n).toBe(0);
  });

  it('keeps the client message id idempotent and accepts a 10,000-message conversation, refusing one more', async () => {
    const user = `${ctx.prefix}-long`;
    const start = new Date('2026-05-01T00:00:00Z').getTime();
    for (let batch = 0; batch < 10; batch++) {
      const messages = Array.from({ length: 1000 }, (_, i) => {
        const n = batch * 1000 + i;
        const content = n === 4320 ? 'I have two cats named Miso and Tofu.' : n % 2 === 0 ? 'ok' : 'thanks!';
        return { id: `m${n}`, role: n % 2 === 0 ? 'user' : 'assistant', content, at: new Date(start + n * 1000).toISOString() };
      });
      const res = await ctx.call('POST', `/v1/users/${user}/conversations/long/messages`, { messages });
      expect(res.status).toBe(202);
      expect(res.body.accepted).toHaveLength(1000);
    }
    const repeat = await ctx.call('POST', `/v1/users/${user}/conversations/long/messages`, { id: 'm5', role: 'assistant', content: 'thanks!' });
    expect(repeat.body.duplicates).toEqual(['m5']);
    const tooMany = await ctx.call('POST', `/v1/users/${user}/conversations/long/messages`, { id: 'm10000', role: 'user', content: 'one more' });
    expect(tooMany.status).toBe(413);
    const ended = await end(user, 'long');
    expect((ended.result as unknown as { messagesProcessed: number }).messagesProcessed).toBe(10_000);
    expect((await active(user)).some((m) => m.text.includes('Miso'))).toBe(true);
  }, 240_000);
});

describe('durability', () => {
  it('extracts an idle conversation without an end call', async () => {
    const idle = await createTestContext({ CONVERSATION_IDLE_SECONDS: '2' });
    try {
      const user = `${idle.prefix}-idle`;
      const res = await idle.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: 'My goal is to run a marathon next year.' });
      expect(res.status).toBe(202);
      const timerId = res.body.workflowId as string;
      let memories: { text: string }[] = [];
      for (let i = 0; i < 60 && memories.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 500));
        memories = (await idle.call('GET', `/v1/users/${user}/memories?status=active`)).body.memories;
      }
      expect(memories.map((m) => m.text).join()).toMatch(/marathon/);
      const conv = await idle.runtime.temporal.workflow.getHandle(timerId).result();
      expect(conv.outcome).toBe('idle-extracted');
    } finally {
      await idle.close();
    }
  });

  it('completes an extraction whose worker was killed mid-way, with the same memories as an uninterrupted run', async () => {
    const lines: [ 'user' | 'assistant', string][] = [];
    const facts = ['I live in Porto.', 'I work as a data engineer.', 'I am allergic to penicillin.', 'I love sourdough bread.', 'My goal is to learn Japanese this year.', 'I hate cilantro.', 'I have a cat named Pixel.', 'We decided to use Kafka for the event bus.'];
    for (let i = 0; i < 60; i++) lines.push(['user', facts[i % facts.length]!.replace('.', ` (${i}).`)]);

    // Reference: an uninterrupted run for another user.
    const reference = `${ctx.prefix}-ref`;
    await converse(reference, 'c1', '2026-05-01T09:00:00Z', lines);
    await end(reference, 'c1');
    const expected = (await active(reference)).map((m) => `${m.type}|${m.text}`).sort();

    // Crash run: the only worker on the queue is a child process we SIGKILL mid-extraction.
    await ctx.stopWorker();
    const stack = inject('stack');
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/worker.ts'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        DATABASE_URL: ctx.runtime.endpoints.databaseUrl,
        CHROMA_URL: stack.chromaUrl,
        EMBEDDINGS_URL: stack.embeddingsUrl,
        CHROMA_COLLECTION: ctx.runtime.config.chroma.collection,
        TEMPORAL_TASK_QUEUE: ctx.taskQueue,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    mkdirSync('test-artifacts', { recursive: true });
    const log = createWriteStream('test-artifacts/killed-worker.log');
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const crashed = `${ctx.prefix}-crash`;
    try {
      await converse(crashed, 'c1', '2026-05-01T09:00:00Z', lines);
      const started = await ctx.call('POST', `/v1/users/${crashed}/conversations/c1/end`, {});
      expect(started.status).toBe(202);
      let decided = 0;
      for (let i = 0; i < 600 && decided < 5; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const { rows } = await ctx.runtime.pool.query(`SELECT count(*)::int AS n FROM memory_events WHERE user_id = $1 AND idempotency_key IS NOT NULL`, [ctx.userKey(crashed)]);
        decided = rows[0].n;
      }
      expect(decided).toBeGreaterThanOrEqual(5);
      child.kill('SIGKILL');
      const { rows } = await ctx.runtime.pool.query(`SELECT count(*)::int AS n FROM memory_events WHERE user_id = $1 AND idempotency_key IS NOT NULL`, [ctx.userKey(crashed)]);
      expect(rows[0].n).toBeLessThan(lines.length);
    } finally {
      child.kill('SIGKILL');
    }
    await ctx.startWorker();
    const result = await ctx.runtime.temporal.workflow.getHandle(ctx.extractWorkflowId(crashed, 'c1')).result();
    expect(result.messagesProcessed).toBe(lines.length);
    const got = (await active(crashed)).map((m) => `${m.type}|${m.text}`).sort();
    expect(got).toEqual(expected);
  }, 180_000);
});
