import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import type { EmbeddingLane } from '../../core/ports/memory';
import { KeepAliveHttp, type HttpAnswer } from '../http/keep-alive-http';

const responseSchema = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int() })),
});

/** Options of {@link EmbeddingsEndpoint}. */
export interface EmbeddingsEndpointOptions {
  /** Base URL of an OpenAI-compatible API, e.g. "http://127.0.0.1:8089/v1". */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Longest one HTTP request may take once it is sent (time waiting for a slot is not counted). */
  timeoutMs?: number;
  /** Interactive requests (queries, single writes) in flight from this process. */
  concurrency?: number;
  /** Background requests in flight from this process: one leaves the endpoint to the others. */
  backgroundConcurrency?: number;
  /** Texts per request on the interactive lane. */
  batchSize?: number;
  /** Texts and characters per request on the background lane: small, so a waiting query is never stuck behind a long batch. */
  backgroundBatchSize?: number;
  backgroundBatchChars?: number;
  /** Attempts after the first for a refused connection or a 429/5xx answer. */
  retries?: number;
}

const RETRY_BASE_MS = 200;

/**
 * The one HTTP client of an OpenAI-compatible `/embeddings` endpoint in a process: the LangChain
 * embeddings of recall and the write path, and the extraction net's statement encoder, share it.
 *
 * Why lanes: the bundled offline server computes one request at a time and keeps computing a
 * request its caller gave up on. Bulk work (re-embedding after an outage, episode and exchange
 * indexing, extraction) therefore goes in small batches through its own slots, and a user's query
 * or a restore waits for at most one of them. Why no retry on a timeout: the server is still busy
 * with the abandoned request, so sending it again only doubles the queue for everyone; the caller
 * (an activity, a reconciler) tries again later instead.
 */
export class EmbeddingsEndpoint {
  private readonly lanes: Record<EmbeddingLane, LimitFunction>;
  // Not the global fetch: its responses outlived every scavenge (../http/keep-alive-http.ts).
  private readonly http = new KeepAliveHttp();

  constructor(private readonly opts: EmbeddingsEndpointOptions) {
    this.lanes = { interactive: pLimit(Math.max(1, opts.concurrency ?? 2)), background: pLimit(Math.max(1, opts.backgroundConcurrency ?? 1)) };
  }

  /** Vectors of `texts` in order; `inputType` picks the e5 prefix the server adds. */
  async embed(input: { texts: readonly string[]; inputType: 'query' | 'passage'; lane?: EmbeddingLane }): Promise<number[][]> {
    const lane = input.lane ?? 'interactive';
    const out: number[][] = [];
    for (const batch of this.batches(input.texts, lane)) {
      out.push(...(await this.lanes[lane](() => this.requestWithRetries(batch, input.inputType))));
    }
    return out;
  }

  private *batches(texts: readonly string[], lane: EmbeddingLane): Generator<readonly string[]> {
    const maxTexts = lane === 'background' ? (this.opts.backgroundBatchSize ?? 16) : (this.opts.batchSize ?? 64);
    const maxChars = lane === 'background' ? (this.opts.backgroundBatchChars ?? 2_000) : Number.POSITIVE_INFINITY;
    let start = 0;
    while (start < texts.length) {
      let end = start + 1;
      let chars = texts[start]!.length;
      while (end < texts.length && end - start < maxTexts && chars + texts[end]!.length <= maxChars) chars += texts[end++]!.length;
      yield texts.slice(start, end);
      start = end;
    }
  }

  private async requestWithRetries(input: readonly string[], inputType: 'query' | 'passage'): Promise<number[][]> {
    const retries = this.opts.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.request(input, inputType);
      } catch (err) {
        if (attempt >= retries || !(err instanceof RetryableEmbeddingFailure)) throw err instanceof RetryableEmbeddingFailure ? err.failure : err;
        await new Promise((resolve) => setTimeout(resolve, RETRY_BASE_MS * 2 ** attempt));
      }
    }
  }

  private async request(input: readonly string[], inputType: 'query' | 'passage'): Promise<number[][]> {
    let res: HttpAnswer;
    try {
      res = await this.http.send(new URL(`${this.opts.baseUrl.replace(/\/$/u, '')}/embeddings`), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.opts.apiKey ?? 'not-needed'}` },
        body: Buffer.from(JSON.stringify({ model: this.opts.model, input, input_type: inputType })),
        timeoutMs: this.opts.timeoutMs ?? 30_000,
      });
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      const failure = new MemoryServiceError(ErrorCode.embedderUnavailable, timedOut ? 'embeddings endpoint did not answer in time' : 'embeddings endpoint unreachable', { timedOut }, { cause: err });
      throw timedOut ? failure : new RetryableEmbeddingFailure(failure);
    }
    if (res.status < 200 || res.status > 299) {
      const failure = new MemoryServiceError(ErrorCode.embedderUnavailable, `embeddings endpoint answered ${res.status}`, { status: res.status });
      throw res.status === 429 || res.status >= 500 ? new RetryableEmbeddingFailure(failure) : failure;
    }
    const body = responseSchema.parse(JSON.parse(res.body.toString('utf8')));
    if (body.data.length !== input.length) throw new MemoryServiceError(ErrorCode.embedderUnavailable, `embeddings endpoint returned ${body.data.length} vectors for ${input.length} texts`);
    return body.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
  }
}

class RetryableEmbeddingFailure extends Error {
  constructor(readonly failure: MemoryServiceError) {
    super(failure.message);
  }
}
