import { describe, expect, it } from 'vitest';
import type { ExchangeVectorIndex, MessageSearch } from '../src/core/ports/recall';
import type { MessageHit, ShownLine } from '../src/core/recall/exchanges';
import { searchExchanges, type ExchangeSearchDeps } from '../src/recall/exchange-search';

// The exchange search's `minVectorSimilarity` option with fake stores (the real stack is in
// test/recall-paraphrase.int.test.ts): in `weak` mode a vector hit at or above the floor is
// evidence without the query's words; below it, or without the option, only words count.

const AT = new Date('2026-08-01T09:00:00Z');
const line = (conversationId: string, seq: number, role: 'user' | 'assistant', content: string, hidden = false): ShownLine => ({ conversationId, messageId: `m${seq}`, seq, role, content, at: AT, hidden });

const conversations: Record<string, ShownLine[]> = {
  skin: [line('skin', 1, 'user', 'The dermatologist says the rash on my arms is contact eczema.'), line('skin', 2, 'assistant', 'A fragrance-free detergent usually helps.')],
  gym: [line('gym', 1, 'user', 'I do arm workouts at the gym on Mondays.'), line('gym', 2, 'assistant', 'Nice routine.')],
  stale: [line('stale', 1, 'user', 'My doctor said my skin is fine.', true), line('stale', 2, 'assistant', 'Good news.')],
};

function deps(vectorHits: { conversationId: string; similarity: number }[], bm25: MessageHit[] = []): ExchangeSearchDeps & { calls: string[] } {
  const calls: string[] = [];
  const messageSearch: MessageSearch = {
    bm25: async () => bm25,
    saidIn: async () => [],
    withNeighbours: async ({ refs }) =>
      refs.map((r) => {
        const lines = conversations[r.conversationId]!;
        const i = lines.findIndex((l) => l.messageId === r.messageId);
        return { anchor: lines[i]!, ...(i > 0 ? { previous: lines[i - 1]! } : {}), ...(i + 1 < lines.length ? { next: lines[i + 1]! } : {}) };
      }),
    forgotten: async () => [],
  };
  const exchangeVectors: ExchangeVectorIndex = {
    query: async ({ unit }) => {
      calls.push(unit === 'line' ? 'exchange_line_ann' : 'exchange_ann');
      return vectorHits.map((h) => ({ id: h.conversationId, similarity: h.similarity, conversationId: h.conversationId, messageId: 'm1', unit }));
    },
    upsert: async () => {},
    remove: async () => {},
    dropUser: async () => false,
  };
  return { messageSearch, episodes: { search: async () => ({ byWords: [], byDate: [] }) } as never, exchangeVectors, calls };
}

const input = { tokens: ['skin', 'doctor', 'tell', 'arms'], ranges: [], limit: 6, mode: 'weak' as const, now: AT, deadline: Date.now() + 10_000, embedding: async () => [1, 0] };
const armsOnly: MessageHit = { conversationId: 'skin', messageId: 'm1', score: 1, matched: ['arms'] };

describe('searchExchanges: vector evidence in weak mode', () => {
  it('runs no vector route without the option, and one shared word is not enough', async () => {
    const d = deps([{ conversationId: 'skin', similarity: 0.9 }], [armsOnly]);
    const out = await searchExchanges(d, 'u', input);
    expect(d.calls).toEqual([]);
    expect(out.exchanges).toEqual([]);
  });

  it('lets an exchange at or above the floor in without the words, and keeps one below it out', async () => {
    const d = deps([
      { conversationId: 'skin', similarity: 0.87 },
      { conversationId: 'gym', similarity: 0.79 },
    ]);
    const out = await searchExchanges(d, 'u', { ...input, minVectorSimilarity: 0.805 });
    expect(d.calls).toEqual(['exchange_ann']);
    expect(out.exchanges.map((x) => x.conversationId)).toEqual(['skin']);
    expect(out.exchanges[0]!.routes).toEqual(['exchange_ann']);
    expect(out.exchanges[0]!.messageIds).toEqual(['m1', 'm2']);
  });

  it('still hides what must stay hidden, however close the vector', async () => {
    const out = await searchExchanges(deps([{ conversationId: 'stale', similarity: 0.95 }]), 'u', { ...input, minVectorSimilarity: 0.805 });
    expect(out.exchanges).toEqual([]);
  });

  it('ignores the floor for questions about the past, where every vector hit already counts', async () => {
    const out = await searchExchanges(deps([{ conversationId: 'gym', similarity: 0.5 }]), 'u', { ...input, mode: 'past', minVectorSimilarity: 0.805 });
    expect(out.exchanges.map((x) => x.conversationId)).toEqual(['gym']);
  });
});
