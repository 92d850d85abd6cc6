import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { exchangeVectorEraser, exchangeVectorId, lineVectorId } from '../src/conversation/exchange-index';
import type { MessageVectorEraser } from '../src/core/ports/lifecycle';
import type { RetentionRepository } from '../src/core/ports/privacy';
import type { ExchangeVectorIndex } from '../src/core/ports/recall';
import type { MemoryTransaction, UnitOfWork } from '../src/core/ports/transaction';
import { sweepRetention } from '../src/lifecycle/lifecycle-sweep';

// The retention sweep (lifecycle) reaches the conversation's exchange vectors only through the
// MessageVectorEraser port it owns; the conversation implements it.

const now = new Date('2026-06-10T00:00:00Z');
const config = loadConfig({ RETENTION_MESSAGES_DAYS: '30', RETENTION_EPISODES_DAYS: 'none', RETENTION_NOTIFICATIONS_DAYS: 'none', RETENTION_DIGESTS_DAYS: 'none' });

/** One page of two users' expired messages, then nothing; every page runs in a "transaction" that records its order. */
function retentionOf(events: string[]) {
  const messages = [
    { userId: 'u1', conversationId: 'c1', messageId: 'm1' },
    { userId: 'u2', conversationId: 'c9', messageId: 'm7' },
    { userId: 'u1', conversationId: 'c1', messageId: 'm2' },
  ];
  const retention: Pick<RetentionRepository, 'messagesPage' | 'dropEmptyConversations'> = {
    async messagesPage() {
      events.push('delete messages');
      return { scanned: messages.length, deleted: messages.length, last: null, postings: 4, messages, conversations: [{ userId: 'u1', conversationId: 'c1' }] };
    },
    async dropEmptyConversations() {
      events.push('drop conversations');
      return 1;
    },
  };
  const unitOfWork = {
    run: async ({ work }: { work: (tx: MemoryTransaction) => Promise<unknown> }) => {
      events.push('begin');
      const out = await work({ retention } as unknown as MemoryTransaction);
      events.push('commit');
      return out;
    },
  } as unknown as UnitOfWork;
  return unitOfWork;
}

describe('retention: expired messages lose their vectors through the lifecycle port', () => {
  it('asks the port once per user, inside the page, and counts what it removed', async () => {
    const events: string[] = [];
    const calls: { userId: string; messages: readonly { conversationId: string; messageId: string }[] }[] = [];
    const eraser: MessageVectorEraser = {
      async eraseMessageVectors(input) {
        events.push(`erase ${input.userId}`);
        calls.push(input);
        return input.messages.length * 10;
      },
    };
    const out = await sweepRetention({ unitOfWork: retentionOf(events), messageVectorEraser: eraser, config }, { now, cursor: null, limit: 100, budgetMs: 10_000 });
    expect(calls).toEqual([
      { userId: 'u1', messages: [{ conversationId: 'c1', messageId: 'm1' }, { conversationId: 'c1', messageId: 'm2' }] },
      { userId: 'u2', messages: [{ conversationId: 'c9', messageId: 'm7' }] },
    ]);
    expect(events).toEqual(['begin', 'delete messages', 'erase u1', 'erase u2', 'drop conversations', 'commit']);
    expect(out).toMatchObject({ done: true, counts: { messages: 3, messagePostings: 4, exchangeVectorsRemoved: 30, conversations: 1 } });
  });

  it('a failing port fails the page, so no message goes while its vectors stay', async () => {
    const events: string[] = [];
    const eraser: MessageVectorEraser = {
      eraseMessageVectors: async () => {
        throw new Error('chroma down');
      },
    };
    await expect(sweepRetention({ unitOfWork: retentionOf(events), messageVectorEraser: eraser, config }, { now, cursor: null, limit: 100, budgetMs: 10_000 })).rejects.toThrow('chroma down');
    expect(events).not.toContain('commit');
  });

  it("the conversation's implementation removes each message's line and pair vectors, and nothing without an exchange index", async () => {
    const removed: { userId: string; ids: string[] }[] = [];
    const exchangeVectors = { remove: async (input: { userId: string; ids: string[] }) => void removed.push(input) } as unknown as ExchangeVectorIndex;
    const n = await exchangeVectorEraser({ exchangeVectors }).eraseMessageVectors({ userId: 'u1', messages: [{ conversationId: 'c1', messageId: 'm1' }] });
    expect(removed).toEqual([{ userId: 'u1', ids: [lineVectorId('u1', 'c1', 'm1'), exchangeVectorId('u1', 'c1', 'm1')] }]);
    expect(n).toBe(2);
    await expect(exchangeVectorEraser({}).eraseMessageVectors({ userId: 'u1', messages: [{ conversationId: 'c1', messageId: 'm1' }] })).resolves.toBe(0);
  });
});
