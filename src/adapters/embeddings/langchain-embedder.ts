import { metrics } from '../../observability/metrics';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import type { Embedder } from '../../core/ports/memory';

/** The {@link Embedder} port over a LangChain embeddings model (the e5 server, or the hashing one). */
export class LangChainEmbedder implements Embedder {
  constructor(private readonly embeddings: Pick<EmbeddingsInterface, 'embedQuery' | 'embedDocuments'>) {}

  embedQuery({ text }: { text: string }): Promise<number[]> {
    return metrics.timed('embedder', 'query', () => this.embeddings.embedQuery(text));
  }

  embedDocuments({ texts }: { texts: string[] }): Promise<number[][]> {
    return metrics.timed('embedder', 'documents', () => this.embeddings.embedDocuments(texts));
  }
}
