import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { extractTurn } from '../examples/chat-workflow/client';
import { causeChain } from '../src/shared/workflow-failures';
import { createTestContext, type TestContext } from './support/harness';

// A conversation message id posted again with another role or content was answered as a
// `duplicate`: the client believed its new text stored while the old one was kept. It is refused
// whole now; a byte-identical re-send (as the write normalises it) stays a duplicate.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const stored = async (user: string, conversationId: string) =>
  (
    await ctx.runtime.pool.query<{ message_id: string; role: string; content: string }>(
      'SELECT message_id, role, content FROM messages WHERE user_id = $1 AND conversation_id = $2 ORDER BY seq',
      [ctx.userKey(user), conversationId],
    )
  ).rows.map((r) => [r.message_id, r.role, r.content]);

describe('a message id sent again', () => {
  it('with another content or role is refused with 422 naming the ids, nothing of the batch stored; the same message stays a duplicate', async () => {
    const user = `${ctx.prefix}-msg`;
    const path = `/v1/users/${user}/conversations/c1/messages`;
    const first = await ctx.call('POST', path, {
      messages: [
        { id: 'm1', role: 'user', content: 'I have a dog named Biscuit.' },
        { id: 'm2', role: 'assistant', content: 'Biscuit is a lovely name.' },
      ],
    });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const before = await stored(user, 'c1');

    const edited = await ctx.call('POST', path, {
      messages: [
        { id: 'm1', role: 'user', content: 'I have a dog named Biscuit.' },
        { id: 'm2', role: 'assistant', content: 'What breed is Biscuit?' },
        { id: 'm3', role: 'user', content: 'A beagle.' },
      ],
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(422);
    expect(edited.body.error).toMatchObject({ code: 'request_id_reused', details: { conversationId: 'c1', messageIds: ['m2'] } });

    const roleSwapped = await ctx.call('POST', path, { id: 'm1', role: 'assistant', content: 'I have a dog named Biscuit.' });
    expect(roleSwapped.status, JSON.stringify(roleSwapped.body)).toBe(422);
    expect(roleSwapped.body.error.details.messageIds).toEqual(['m1']);

    // Nothing of the refused requests: m3 is not stored, m1 and m2 are what they were.
    expect(await stored(user, 'c1')).toEqual(before);

    // The same messages as the write takes them (white space trimmed, a time of their own or none)
    // are duplicates, as before.
    for (const again of [
      { id: 'm1', role: 'user', content: '  I have a dog named Biscuit.\n' },
      { id: 'm1', role: 'user', content: 'I have a dog named Biscuit.', at: '2026-04-02T10:00:00+02:00' },
    ]) {
      const res = await ctx.call('POST', path, { messages: [again, { id: 'm2', role: 'assistant', content: 'Biscuit is a lovely name.' }] });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body).toMatchObject({ accepted: [], duplicates: ['m1', 'm2'] });
    }
    expect(await stored(user, 'c1')).toEqual(before);
  });

  it('by a caller through Temporal (ExtractMemories with messages) is refused the same way', async () => {
    const connection = await Connection.connect({ address: inject('stack').temporalAddress });
    try {
      const raw = new Client({ connection, namespace: ctx.runtime.config.temporal.namespace });
      const userId = `${ctx.prefix}-caller`;
      const input = { tenantId: 'tenant-a', userId, conversationId: 'c1', messages: [{ id: 'm1', role: 'user' as const, content: 'My favourite tea is sencha.' }] };
      const first = await extractTurn(raw, input, `${ctx.prefix}-turn-1`, ctx.taskQueue);
      expect(first.messages).toEqual({ inserted: ['m1'], duplicates: [] });
      const failed = await extractTurn(raw, { ...input, messages: [{ id: 'm1', role: 'user', content: 'My favourite tea is oolong.' }] }, `${ctx.prefix}-turn-2`, ctx.taskQueue).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(WorkflowFailedError);
      expect(causeChain(failed).some((e) => (e as { type?: string }).type === 'request_id_reused')).toBe(true);
      expect(await stored(userId, 'c1')).toEqual([['m1', 'user', 'My favourite tea is sencha.']]);
    } finally {
      await connection.close();
    }
  });
});
