import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { Document } from '@langchain/core/documents';
import type { VectorIndex } from '../../core/ports/memory';
import { MemoryRouteRetriever, type MemoryRouteInput, type MemoryRouteMetadata } from './memory-route';

export interface MemoryAnnRetrieverInput extends MemoryRouteInput {
  /** The vector index (in production the per-user Chroma collections, queried through LangChain's `Chroma` store). */
  vectors: Pick<VectorIndex, 'query'>;
  /** Embeds the query once; recall passes its per-request {@link QueryEmbeddings}. */
  embeddings: Pick<EmbeddingsInterface, 'embedQuery'>;
}

/**
 * The ANN route as a LangChain retriever: the user's nearest memories by vector, best first. Each
 * Document's `id` is the memory id and `metadata.similarity` the cosine similarity; `pageContent`
 * is empty because Chroma holds vectors only (the texts live in PostgreSQL, which recall reads once
 * for all routes together). The query is embedded once, by `embeddings`, and the index is asked by
 * vector, so no store embeds it a second time.
 */
export class MemoryAnnRetriever extends MemoryRouteRetriever {
  static override lc_name() {
    return 'MemoryAnnRetriever';
  }
  private readonly vectors: Pick<VectorIndex, 'query'>;
  private readonly embeddings: Pick<EmbeddingsInterface, 'embedQuery'>;

  constructor(fields: MemoryAnnRetrieverInput) {
    super(fields);
    this.vectors = fields.vectors;
    this.embeddings = fields.embeddings;
  }

  override async _getRelevantDocuments(query: string): Promise<Document<MemoryRouteMetadata>[]> {
    const embedding = await this.embeddings.embedQuery(query);
    const hits = await this.vectors.query({ userId: this.userId, embedding, k: this.k, types: this.types });
    return hits.map((h) => new Document<MemoryRouteMetadata>({ id: h.id, pageContent: '', metadata: { route: 'ann', similarity: h.similarity } }));
  }
}
