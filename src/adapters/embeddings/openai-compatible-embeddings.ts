import { metrics } from '../../observability/metrics';
import { Embeddings, type EmbeddingsParams } from '@langchain/core/embeddings';
import type { EmbeddingLane } from '../../core/ports/memory';
import type { EmbeddingsEndpoint } from './embeddings-endpoint';

/**
 * LangChain `Embeddings` over an OpenAI-compatible `/v1/embeddings` endpoint. It sends
 * `input_type` (query | passage) so asymmetric models such as e5 get the right prefix from the
 * server, and caches query embeddings (the recall hot path asks for the same query repeatedly).
 * Retries and timeouts are the endpoint's (see {@link EmbeddingsEndpoint}), not LangChain's: its
 * retry on a timeout would send the same batch again to a server still computing it.
 */
export class OpenAICompatibleEmbeddings extends Embeddings {
  private readonly queryCache = new Map<string, number[]>();

  constructor(
    private readonly endpoint: EmbeddingsEndpoint,
    private readonly opts: { lane?: EmbeddingLane; queryCacheSize?: number } = {},
    params: EmbeddingsParams = {},
  ) {
    super({ ...params, maxRetries: 0 });
  }

  override async embedQuery(text: string): Promise<number[]> {
    const cached = this.queryCache.get(text);
    metrics.embedderCache(cached !== undefined);
    if (cached) return cached;
    const [vector] = await this.endpoint.embed({ texts: [text], inputType: 'query', lane: this.opts.lane });
    const limit = this.opts.queryCacheSize ?? 2000;
    if (this.queryCache.size >= limit) this.queryCache.delete(this.queryCache.keys().next().value!);
    this.queryCache.set(text, vector!);
    return vector!;
  }

  override embedDocuments(texts: string[]): Promise<number[][]> {
    return this.endpoint.embed({ texts, inputType: 'passage', lane: this.opts.lane });
  }
}
