import { metrics } from '../../observability/metrics';
import { Embeddings, type EmbeddingsParams } from '@langchain/core/embeddings';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';

const responseSchema = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int() })),
});

/**
 * LangChain `Embeddings` over any OpenAI-compatible `/v1/embeddings` endpoint. It sends
 * `input_type` (query | passage) so asymmetric models such as e5 get the right prefix from the
 * server, and caches query embeddings (the recall hot path asks for the same query repeatedly).
 */
export class OpenAICompatibleEmbeddings extends Embeddings {
  private readonly queryCache = new Map<string, number[]>();

  constructor(
    private readonly opts: { baseUrl: string; apiKey: string; model: string; timeoutMs?: number; batchSize?: number; queryCacheSize?: number },
    params: EmbeddingsParams = {},
  ) {
    super({ maxRetries: 2, ...params });
  }

  override async embedQuery(text: string): Promise<number[]> {
    const cached = this.queryCache.get(text);
    metrics.embedderCache(cached !== undefined);
    if (cached) return cached;
    const [vector] = await this.request([text], 'query');
    const limit = this.opts.queryCacheSize ?? 2000;
    if (this.queryCache.size >= limit) this.queryCache.delete(this.queryCache.keys().next().value!);
    this.queryCache.set(text, vector!);
    return vector!;
  }

  override async embedDocuments(texts: string[]): Promise<number[][]> {
    const batch = this.opts.batchSize ?? 64;
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += batch) out.push(...(await this.request(texts.slice(i, i + batch), 'passage')));
    return out;
  }

  private async request(input: string[], inputType: 'query' | 'passage'): Promise<number[][]> {
    return this.caller.call(async () => {
      let res: Response;
      try {
        res = await fetch(`${this.opts.baseUrl.replace(/\/$/, '')}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.opts.apiKey}` },
          body: JSON.stringify({ model: this.opts.model, input, input_type: inputType }),
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        });
      } catch (err) {
        throw new MemoryServiceError(ErrorCode.embedderUnavailable, 'embeddings endpoint unreachable', {}, { cause: err });
      }
      if (!res.ok) {
        throw new MemoryServiceError(ErrorCode.embedderUnavailable, `embeddings endpoint answered ${res.status}`, {
          status: res.status,
        });
      }
      const body = responseSchema.parse(await res.json());
      return body.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
    });
  }
}
