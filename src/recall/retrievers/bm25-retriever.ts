import { Document } from '@langchain/core/documents';
import type { MemoryRepository } from '../../core/ports/memory';
import { tokenizeForIndex } from '../../shared/segmentation';
import { MemoryRouteRetriever, type MemoryRouteInput, type MemoryRouteMetadata } from './memory-route';

export interface MemoryBm25RetrieverInput extends MemoryRouteInput {
  /** The memory store's BM25 over PostgreSQL postings (one BM25 for every caller). */
  memories: Pick<MemoryRepository, 'bm25'>;
  /** Earlier chat lines whose words count too (recall passes the last two). */
  context?: string[];
}

/**
 * The BM25 route as a LangChain retriever: the user's memories sharing words with the query
 * (segmented like the index: jieba for Chinese, words for the rest), best first. Each Document's
 * `id` is the memory id and `metadata.score` the BM25 score; `pageContent` is empty (the store
 * answers ids; recall reads the texts once for all routes).
 */
export class MemoryBm25Retriever extends MemoryRouteRetriever {
  static override lc_name() {
    return 'MemoryBm25Retriever';
  }
  private readonly memories: Pick<MemoryRepository, 'bm25'>;
  private readonly context: string[];

  constructor(fields: MemoryBm25RetrieverInput) {
    super(fields);
    this.memories = fields.memories;
    this.context = fields.context ?? [];
  }

  override async _getRelevantDocuments(query: string): Promise<Document<MemoryRouteMetadata>[]> {
    const tokens = tokenizeForIndex([query, ...this.context].join(' '));
    const hits = await this.memories.bm25({ userId: this.userId, tokens, k: this.k, types: this.types });
    return hits.map((h) => new Document<MemoryRouteMetadata>({ id: h.id, pageContent: '', metadata: { route: 'bm25', score: h.score } }));
  }
}
