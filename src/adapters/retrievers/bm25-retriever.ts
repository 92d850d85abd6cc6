import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import type { MemoryRepository } from '../../core/ports';
import type { MemoryType } from '../../core/types';
import { tokenizeForIndex } from '../text/jieba';
import { MEMORY_ROUTE_NAMESPACE, type MemoryRouteMetadata } from './documents';

export interface MemoryBm25RetrieverInput extends BaseRetrieverInput {
  /** The memory store's BM25 over PostgreSQL postings (one BM25 for every caller). */
  memories: Pick<MemoryRepository, 'bm25'>;
  userId: string;
  k: number;
  types?: MemoryType[];
  /** Earlier chat lines whose words count too (recall passes the last two). */
  context?: string[];
}

/**
 * The BM25 route as a LangChain retriever: the user's memories sharing words with the query
 * (segmented like the index: jieba for Chinese, words for the rest), best first. Each Document's
 * `id` is the memory id and `metadata.score` the BM25 score; `pageContent` is empty (the store
 * answers ids; recall reads the texts once for all routes).
 */
export class MemoryBm25Retriever extends BaseRetriever {
  static override lc_name() {
    return 'MemoryBm25Retriever';
  }
  override lc_namespace = MEMORY_ROUTE_NAMESPACE;
  private readonly memories: Pick<MemoryRepository, 'bm25'>;
  private readonly userId: string;
  private readonly k: number;
  private readonly types?: MemoryType[];
  private readonly context: string[];

  constructor(fields: MemoryBm25RetrieverInput) {
    super(fields);
    this.memories = fields.memories;
    this.userId = fields.userId;
    this.k = fields.k;
    this.types = fields.types;
    this.context = fields.context ?? [];
  }

  override async _getRelevantDocuments(query: string): Promise<Document<MemoryRouteMetadata>[]> {
    const tokens = tokenizeForIndex([query, ...this.context].join(' '));
    const hits = await this.memories.bm25({ userId: this.userId, tokens, k: this.k, types: this.types });
    return hits.map((h) => new Document<MemoryRouteMetadata>({ id: h.id, pageContent: '', metadata: { route: 'bm25', score: h.score } }));
  }
}
