import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import type { Embedder } from '../../core/ports/memory';

/**
 * The {@link Embedder} port as LangChain embeddings, remembering each query's vector for as long as
 * the instance lives. Recall makes one per request: every route that needs the query's vector
 * (the memory ANN retriever, the rewrite's searches, the exchange episodes) shares one embedding
 * call instead of each asking the embedder again.
 */
export class QueryEmbeddings implements EmbeddingsInterface {
  private readonly vectors = new Map<string, Promise<number[]>>();

  constructor(private readonly embedder: Embedder) {}

  embedQuery(text: string): Promise<number[]> {
    let vector = this.vectors.get(text);
    if (!vector) {
      vector = this.embedder.embedQuery({ text });
      // A failed embedding is not remembered: the next route asks again.
      vector.catch(() => this.vectors.delete(text));
      this.vectors.set(text, vector);
    }
    return vector;
  }

  embedDocuments(texts: string[]): Promise<number[][]> {
    return this.embedder.embedDocuments({ texts });
  }
}
