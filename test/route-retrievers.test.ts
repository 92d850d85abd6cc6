import { Document } from '@langchain/core/documents';
import { BaseRetriever } from '@langchain/core/retrievers';
import { describe, expect, it } from 'vitest';
import { MemoryAnnRetriever } from '../src/recall/retrievers/ann-retriever';
import { MemoryBm25Retriever } from '../src/recall/retrievers/bm25-retriever';
import { memoryIds } from '../src/recall/retrievers/memory-route';
import { ExchangeRetriever, exchangesOf } from '../src/recall/retrievers/exchange-retriever';
import { QueryEmbeddings } from '../src/recall/retrievers/query-embeddings';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import type { RankedExchange } from '../src/core/recall/exchanges';
import { fuseRankings } from '../src/core/recall/rrf';

describe('recall route retrievers (fake ports)', () => {
  it('ANN: embeds the query once, asks the index by vector for the user, ids and similarities in order', async () => {
    const asked: unknown[] = [];
    let embedded = 0;
    const retriever = new MemoryAnnRetriever({
      vectors: {
        query: async (input) => {
          asked.push(input);
          return [
            { id: 'm2', similarity: 0.91 },
            { id: 'm1', similarity: 0.72 },
          ];
        },
      },
      embeddings: { embedQuery: async () => (embedded++, [0.1, 0.2]) },
      userId: 'acme:alice',
      k: 20,
      types: ['preference'],
    });
    const docs = await retriever.invoke('咖啡');
    expect(retriever).toBeInstanceOf(BaseRetriever);
    expect(embedded).toBe(1);
    expect(asked).toEqual([{ userId: 'acme:alice', embedding: [0.1, 0.2], k: 20, types: ['preference'] }]);
    expect(docs.map((d) => [d.id, d.metadata.similarity, d.metadata.route])).toEqual([
      ['m2', 0.91, 'ann'],
      ['m1', 0.72, 'ann'],
    ]);
  });

  it('BM25: tokenizes the query with the chat lines before it, as the index does', async () => {
    const asked: { userId: string; tokens: string[]; k: number }[] = [];
    const retriever = new MemoryBm25Retriever({
      memories: { bm25: async (input) => (asked.push(input), [{ id: 'm3', score: 4.2 }]) },
      userId: 'acme:bob',
      k: 20,
      context: ['我喜欢拿铁'],
    });
    const docs = await retriever.invoke('咖啡 coffee');
    expect(asked[0]!.userId).toBe('acme:bob');
    expect(asked[0]!.tokens).toEqual(tokenizeForIndex('咖啡 coffee 我喜欢拿铁'));
    expect(memoryIds(docs)).toEqual(['m3']);
    expect(docs[0]!.metadata).toEqual({ route: 'bm25', score: 4.2 });
  });

  it('exchanges: one Document per exchange, the exchange and the sub-route report handed back', async () => {
    const at = new Date('2026-06-02T10:00:00Z');
    const exchange: RankedExchange = {
      key: 'c1:u1',
      conversationId: 'c1',
      user: { conversationId: 'c1', messageId: 'u1', seq: 1, role: 'user', content: '推荐一本书', at },
      assistant: { conversationId: 'c1', messageId: 'a1', seq: 2, role: 'assistant', content: '《三体》', at },
      date: at,
      messageIds: ['u1', 'a1'],
      score: 0.5,
      routes: ['words'],
      inRange: false,
    };
    const outcome = { exchanges: [exchange], routes: [{ route: 'words', ok: true, ms: 1, hits: 1 }], failures: [{ route: 'episodes', err: new Error('down') }] };
    const seen: (typeof outcome)[] = [];
    const queries: string[] = [];
    const docs = await new ExchangeRetriever({ search: async (q) => (queries.push(q), outcome), onSearched: (o) => seen.push(o) }).invoke('上次推荐的书');
    expect(queries).toEqual(['上次推荐的书']);
    expect(seen).toEqual([outcome]);
    expect(docs[0]!.pageContent).toBe('user: 推荐一本书\nassistant: 《三体》');
    expect(docs[0]!.metadata).toMatchObject({ conversationId: 'c1', messageIds: ['u1', 'a1'], date: at.toISOString() });
    expect(exchangesOf(docs)).toEqual([exchange]);
  });

  it('QueryEmbeddings: one embedder call per text for the whole request, a failure not remembered', async () => {
    const calls: string[] = [];
    let fail = true;
    const shared = new QueryEmbeddings({
      embedQuery: async ({ text }) => {
        calls.push(text);
        if (text === 'flaky' && fail) throw new Error('embedder down');
        return [text.length];
      },
      embedDocuments: async ({ texts }) => texts.map((t) => [t.length]),
    });
    expect(await Promise.all([shared.embedQuery('a'), shared.embedQuery('a'), shared.embedQuery('bb')])).toEqual([[1], [1], [2]]);
    await expect(shared.embedQuery('flaky')).rejects.toThrow('embedder down');
    fail = false;
    expect(await shared.embedQuery('flaky')).toEqual([5]);
    expect(calls).toEqual(['a', 'bb', 'flaky', 'flaky']);
  });

  it('any retriever whose Documents carry memory ids can stand in for a route in RRF', async () => {
    class Fixed extends BaseRetriever {
      lc_namespace = ['test'];
      constructor(private readonly ids: string[]) {
        super();
      }
      override async _getRelevantDocuments(): Promise<Document[]> {
        return this.ids.map((id) => new Document({ pageContent: '', metadata: { id } }));
      }
    }
    const ann = memoryIds(await new Fixed(['a', 'b']).invoke('q'));
    const mine = memoryIds(await new Fixed(['b', 'c']).invoke('q'));
    expect(
      fuseRankings([
        { route: 'ann', ids: ann },
        { route: 'mine', ids: mine },
      ])[0]!.id,
    ).toBe('b');
  });
});
