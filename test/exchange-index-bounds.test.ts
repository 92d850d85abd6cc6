import { describe, expect, it } from 'vitest';
import type { StoredLine } from '../src/core/exchange-lines';
import { indexExchanges, type ExchangeIndexDeps, type ExchangeIndexResult } from '../src/conversation/exchange-index';
import { byUser, chunkLength, CHUNK_TOKENS, cutToModel, estimateTokens, lineCost, MODEL_READ_TOKENS } from '../src/conversation/exchange-index-bounds';

const cjk = (n: number) => '我们昨天去了北京的故宫博物院看到了很多古代的文物'.repeat(Math.ceil(n / 24)).slice(0, n);

describe('what one text may cost the embedder', () => {
  it('estimates ideographs at a token each and other scripts at a third', () => {
    expect(estimateTokens(cjk(300))).toBe(300);
    expect(estimateTokens('a'.repeat(300))).toBe(100);
    expect(estimateTokens('')).toBe(0);
  });

  it('cuts a long CJK text to what the model reads, and leaves a short one whole', () => {
    const cut = cutToModel(cjk(8000));
    expect(Array.from(cut)).toHaveLength(MODEL_READ_TOKENS);
    expect(estimateTokens(cut)).toBeLessThanOrEqual(MODEL_READ_TOKENS);
    expect(cutToModel('short line')).toBe('short line');
    // Never inside a surrogate pair.
    expect(cutToModel('😀'.repeat(600))).toBe('😀'.repeat(MODEL_READ_TOKENS));
  });
});

describe('chunkLength', () => {
  it('takes as many short lines as are read, but few long ones', () => {
    expect(chunkLength(Array.from({ length: 64 }, () => ({ content: 'hi there' })))).toBe(64);
    const long = Array.from({ length: 64 }, () => ({ content: cjk(8000) }));
    const n = chunkLength(long);
    expect(n).toBe(Math.floor(CHUNK_TOKENS / lineCost(cjk(8000))));
    expect(n * lineCost(cjk(8000))).toBeLessThanOrEqual(CHUNK_TOKENS);
  });

  it('takes at least one line, so a chunk always moves the watermark', () => {
    expect(chunkLength([{ content: cjk(8000) }], 10)).toBe(1);
    expect(chunkLength([])).toBe(0);
  });
});

describe('byUser', () => {
  it('groups conversations by user, in order of first appearance', () => {
    const owed = [
      { userId: 'b', c: 1 },
      { userId: 'a', c: 2 },
      { userId: 'b', c: 3 },
    ];
    expect(byUser(owed)).toEqual([[owed[0], owed[2]], [owed[1]]]);
  });
});

/** A store of conversations in memory, with the watermark semantics of the repository. */
function fakeDeps(conversations: { userId: string; conversationId: string; lines: string[] }[], opts: { failAfterTexts?: number } = {}) {
  const at = new Date('2026-03-01T09:00:00Z');
  const marks = new Map(conversations.map((c) => [`${c.userId}/${c.conversationId}`, 0]));
  const stored = new Map(
    conversations.map((c) => [
      `${c.userId}/${c.conversationId}`,
      c.lines.map((content, i): StoredLine => ({ conversationId: c.conversationId, messageId: `m${i + 1}`, seq: i + 1, role: i % 2 === 0 ? 'user' : 'assistant', content, at })),
    ]),
  );
  const calls: string[][] = [];
  const written: string[] = [];
  const deps: ExchangeIndexDeps = {
    embedder: {
      embedDocuments: async ({ texts }: { texts: string[] }) => {
        if (opts.failAfterTexts !== undefined && calls.flat().length + texts.length > opts.failAfterTexts) throw new Error('embedder saturated');
        calls.push(texts);
        return texts.map(() => [1, 0]);
      },
    } as unknown as ExchangeIndexDeps['embedder'],
    exchangeIndex: {
      owed: async ({ limit }) =>
        conversations
          .filter((c) => marks.get(`${c.userId}/${c.conversationId}`)! < c.lines.length)
          .map((c) => ({ userId: c.userId, conversationId: c.conversationId, indexedSeq: marks.get(`${c.userId}/${c.conversationId}`)!, linkedSeq: marks.get(`${c.userId}/${c.conversationId}`)! }))
          .slice(0, limit),
      linesAfter: async ({ userId, conversationId, afterSeq, limit }) => {
        const lines = stored.get(`${userId}/${conversationId}`)!;
        return [...lines.filter((l) => l.seq <= afterSeq).slice(-1), ...lines.filter((l) => l.seq > afterSeq).slice(0, limit)];
      },
      advance: async ({ userId, conversationId, seq }) => {
        const key = `${userId}/${conversationId}`;
        marks.set(key, Math.max(marks.get(key)!, seq));
      },
    } as ExchangeIndexDeps['exchangeIndex'],
    exchangeVectors: {
      upsert: async ({ userId, items }: { userId: string; items: { conversationId: string }[] }) => {
        written.push(...items.map((i) => `${userId}/${i.conversationId}`));
      },
    } as unknown as ExchangeIndexDeps['exchangeVectors'],
  };
  return { deps, calls, written, mark: (userId: string, conversationId: string) => marks.get(`${userId}/${conversationId}`)! };
}

describe('indexExchanges bounds its work', () => {
  // One user's three conversations of 330 lines of 8,000 CJK characters each, owed before another user's short one.
  const backlog = ['c1', 'c2', 'c3'].map((conversationId) => ({ userId: 'heavy', conversationId, lines: Array.from({ length: 330 }, () => cjk(8000)) }));
  const light = { userId: 'light', conversationId: 'c-new', lines: ['Where did we go yesterday?', 'To the Palace Museum.'] };

  it('reports progress after every bounded chunk of texts cut to what the model reads, and serves every user in the first round', async () => {
    const { deps, calls, mark } = fakeDeps([...backlog, light]);
    const beats: ExchangeIndexResult[] = [];
    const result = await indexExchanges(deps, { limit: 200, budgetMs: 60_000, onProgress: (r) => beats.push({ ...r }) });
    expect(calls.length).toBeGreaterThan(1);
    for (const texts of calls) {
      expect(texts.every((t) => estimateTokens(t) <= MODEL_READ_TOKENS)).toBe(true);
      expect(texts.reduce((sum, t) => sum + estimateTokens(t), 0)).toBeLessThanOrEqual(CHUNK_TOKENS);
    }
    // A heartbeat per embedding chunk (and per conversation that had nothing to embed).
    expect(beats.length).toBeGreaterThanOrEqual(calls.length);
    expect(mark('light', 'c-new')).toBe(2);
    // The heavy user made progress, bounded: most of its backlog waits for the next runs.
    expect(mark('heavy', 'c1')).toBeGreaterThan(0);
    expect(mark('heavy', 'c1')).toBeLessThan(330);
    expect(mark('heavy', 'c3')).toBe(0);
    expect(result.deferred).toBe(3);
    expect(result.failed).toBe(0);
  });

  it('keeps the chunks written before the embedder gave out', async () => {
    const { deps, mark } = fakeDeps([backlog[0]!], { failAfterTexts: 40 });
    await expect(indexExchanges(deps, { limit: 200, budgetMs: 60_000 })).rejects.toThrow();
    expect(mark('heavy', 'c1')).toBeGreaterThan(0);
  });

  it('puts a user whose budget is spent behind the others, and lets a user alone use its whole budget', async () => {
    const { deps, mark } = fakeDeps([backlog[0]!]);
    await indexExchanges(deps, { limit: 200, budgetMs: 60_000, userTokens: 3 * CHUNK_TOKENS });
    const once = mark('heavy', 'c1');
    expect(once).toBeGreaterThanOrEqual(3 * chunkLength([{ content: cjk(8000) }, ...Array.from({ length: 63 }, () => ({ content: cjk(8000) }))]) - 1);
    expect(once).toBeLessThan(330);
  });
});
