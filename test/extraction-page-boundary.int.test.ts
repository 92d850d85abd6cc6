import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractRunPage } from '../src/conversation/extraction-runs';
import { createTestContext, type TestContext } from './support/harness';

// A short answer ("Cello.") takes its predicate from the assistant's question. The question may
// sit on an earlier page of the same run, or in a run that ended before the user answered (the
// conversation went idle, then went on); the answer must still be read with it.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const stamp = Date.now().toString(36);

async function post(user: string, conversation: string, messages: { id: string; role: 'user' | 'assistant'; content: string }[]) {
  const res = await ctx.call('POST', `/v1/users/${user}/conversations/${conversation}/messages`, { messages });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
}

async function seqOf(user: string, conversation: string, messageId: string): Promise<number> {
  const { rows } = await ctx.runtime.pool.query<{ seq: string }>('SELECT seq FROM messages WHERE user_id = $1 AND conversation_id = $2 AND message_id = $3', [
    ctx.userKey(user),
    conversation,
    messageId,
  ]);
  return Number(rows[0]!.seq);
}

const hooks = { attemptId: 'page-boundary-test', heartbeat() {} };

describe('an answer at the top of a page reads the question before it', () => {
  it('a page that starts with the answer keeps the question predicate', async () => {
    const user = `${stamp}-pb-en`;
    await post(user, 'c1', [
      { id: 'u1', role: 'user', content: 'Just got back from rehearsal.' },
      { id: 'a1', role: 'assistant', content: 'Sounds fun! What instrument do you play?' },
      { id: 'u2', role: 'user', content: 'Cello. Started when I was eight.' },
    ]);
    const afterSeq = await seqOf(user, 'c1', 'a1');
    const page = await extractRunPage(ctx.runtime.deps, { userId: ctx.userKey(user), conversationId: 'c1', afterSeq, limit: 200 }, hooks);
    expect(page.messages.map((m) => m.id)).toEqual(['u2']);
    const texts = page.candidates.map((c) => c.candidate.text);
    expect(texts.some((t) => /instrument/iu.test(t) && /cello/iu.test(t)), JSON.stringify(texts)).toBe(true);
    // Cited to the user's message only: the question is context, not evidence.
    for (const { candidate } of page.candidates) expect(candidate.messageIds).toEqual(['u2']);
  });

  it('a user message after a user message is not read with an older question', async () => {
    const user = `${stamp}-pb-user`;
    await post(user, 'c1', [
      { id: 'a1', role: 'assistant', content: 'What instrument do you play?' },
      { id: 'u1', role: 'user', content: 'Hold on, my phone is ringing.' },
      { id: 'u2', role: 'user', content: 'Cello.' },
    ]);
    const afterSeq = await seqOf(user, 'c1', 'u1');
    const page = await extractRunPage(ctx.runtime.deps, { userId: ctx.userKey(user), conversationId: 'c1', afterSeq, limit: 200 }, hooks);
    expect(page.candidates.filter((c) => /instrument/iu.test(c.candidate.text))).toEqual([]);
  });

  it('an answer sent after the run that covered the question becomes a memory', async () => {
    const user = `${stamp}-pb-zh`;
    await post(user, 'c1', [
      { id: 'u1', role: 'user', content: '今天带女儿去公园了。' },
      { id: 'a1', role: 'assistant', content: '真好！你女儿叫什么名字？' },
    ]);
    const first = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {});
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await post(user, 'c1', [{ id: 'u2', role: 'user', content: '朵朵，刚上幼儿园。' }]);
    const second = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {});
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const texts = (second.body.result.decisions as { text: string }[]).map((d) => d.text);
    expect(texts, JSON.stringify(second.body.result)).toContain('我女儿叫朵朵，刚上幼儿园');
  });
});
