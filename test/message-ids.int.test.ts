import { describe, expect, it } from 'vitest';
import { TEST_KEY, useTestContext } from './support/harness';

// Message ids as chat platforms make them (Matrix event ids, composite ids with ':' '/' '+'),
// through the real stack: stored as given, found by search and extraction under the same id,
// exported as given.
const t = useTestContext();

describe('message ids as chat platforms send them', () => {
  it('round-trip through messages, extraction, conversation search and export', async () => {
    const ctx = t.ctx;
    const user = `${ctx.prefix}-matrix`;
    const ids = { peanut: '$abc:server.org', reply: 'conv:42:msg:7', tea: 'a/b+c=d', teaReply: 'a,b' };
    const conv = 'room1';
    const res = await ctx.call('POST', `/v1/users/${user}/conversations/${conv}/messages`, {
      messages: [
        { id: ids.peanut, role: 'user', content: 'I am allergic to peanuts, they give me a rash.' },
        { id: ids.reply, role: 'assistant', content: 'Noted, no peanuts.' },
        { id: ids.tea, role: 'user', content: 'I prefer green tea over coffee.' },
        { id: ids.teaReply, role: 'assistant', content: 'Green tea it is.' },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.accepted).toEqual([ids.peanut, ids.reply, ids.tea, ids.teaReply]);

    // Sent again: recognised as the same messages, by the same ids.
    const again = await ctx.call('POST', `/v1/users/${user}/conversations/${conv}/messages`, { id: ids.peanut, role: 'user', content: 'I am allergic to peanuts, they give me a rash.' });
    expect(again.body.duplicates).toEqual([ids.peanut]);

    // One message and a batch in one body: refused whole, not the one stored and the batch dropped.
    const both = await ctx.call('POST', `/v1/users/${user}/conversations/${conv}/messages`, {
      id: 'both-1',
      role: 'user',
      content: 'I live in Porto.',
      messages: [{ id: 'both-2', role: 'user', content: 'I work as a pilot.' }],
    });
    expect(both.status, JSON.stringify(both.body)).toBe(400);
    expect(both.body.error.code).toBe('validation_failed');

    const ended = await ctx.call('POST', `/v1/users/${user}/conversations/${conv}/end?wait=true`);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const decisions = ended.body.result.decisions as { action: string; messageIds: string[]; text: string }[];
    const peanut = decisions.find((d) => /peanut/i.test(d.text));
    expect(peanut, JSON.stringify(decisions)).toBeDefined();
    expect(peanut!.action).toBe('create');
    expect(peanut!.messageIds).toEqual([ids.peanut]);

    const found = await ctx.call('POST', `/v1/users/${user}/conversations/search`, { query: 'peanuts rash' });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const exchange = (found.body.exchanges as { messageIds: string[]; user?: { id: string } }[]).find((e) => e.user?.id === ids.peanut);
    expect(exchange, JSON.stringify(found.body.exchanges)).toBeDefined();
    expect(exchange!.messageIds).toEqual([ids.peanut, ids.reply]);

    const exported = await fetch(`${ctx.baseUrl}/v1/users/${user}/export`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(exported.status).toBe(200);
    const doc = (await exported.json()) as { messages: { messageId: string }[] };
    const exportedIds = doc.messages.map((m) => m.messageId);
    expect(exportedIds).toEqual(Object.values(ids));
  });
});
