import { metrics } from '../../observability/metrics';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import type { Embedder, EmbeddingLane } from '../../core/ports/memory';
import { embeddableQuery } from '../../core/recall/sanitize-query';

type DocumentEmbeddings = Pick<EmbeddingsInterface, 'embedDocuments'>;

/**
 * The {@link Embedder} port over a LangChain embeddings model (the e5 server, or the hashing one).
 * `background` is the same model on the endpoint's bulk lane; without one, both lanes share `embeddings`.
 */
export class LangChainEmbedder implements Embedder {
  constructor(
    private readonly embeddings: Pick<EmbeddingsInterface, 'embedQuery' | 'embedDocuments'>,
    private readonly background: DocumentEmbeddings = embeddings,
  ) {}

  embedQuery({ text }: { text: string }): Promise<number[]> {
    // Bounded here, where every query (recall, search, MCP, the health probe) reaches the model.
    return metrics.timed('embedder', 'query', () => this.embeddings.embedQuery(embeddableQuery(text)));
  }

  embedDocuments({ texts, lane }: { texts: string[]; lane?: EmbeddingLane }): Promise<number[][]> {
    const model = lane === 'background' ? this.background : this.embeddings;
    return metrics.timed('embedder', lane === 'background' ? 'documents_background' : 'documents', () => model.embedDocuments(texts));
  }
}
