import type { Embeddings } from '@langchain/core/embeddings';
import { HashingEmbeddings } from '../adapters/embeddings/hashing-embeddings';
import { OpenAICompatibleEmbeddings } from '../adapters/embeddings/openai-compatible-embeddings';
import { EmbeddingsEndpoint } from '../adapters/embeddings/embeddings-endpoint';
import { E5StatementEncoder } from '../adapters/embeddings/e5-statement-encoder';
import { OfflineExtractor } from '../adapters/extraction/offline-extractor';
import type { RuleWork } from '../shared/rule-work';
import { createChatModel } from '../adapters/llm/chat-model';
import { LlmExtractor } from '../adapters/llm/llm-extractor';
import { ExtractionNet } from '../core/extraction/net';
import type { Extractor } from '../core/ports/conversation';
import type { AppConfig } from '../config';
import type { StackEndpoints } from '../stack';

// The composition root's models: the embeddings (wrapped into the one Embedder port by
// src/runtime.ts) and the extractor that may share their HTTP client.

export interface EmbeddingModels {
  /** What a user waits on: queries, one memory written or restored. */
  interactive: Embeddings;
  /** The same model on the endpoint's bulk lane (the same object for the hashing model). */
  background: Embeddings;
  /** The one HTTP client of the endpoint, shared with the extraction net; none for hashing. */
  endpoint?: EmbeddingsEndpoint;
}

export function createEmbeddings(config: AppConfig, endpoints: StackEndpoints): EmbeddingModels {
  if (config.embedder.provider === 'hashing') {
    const hashing = new HashingEmbeddings(config.embedder.dimensions);
    return { interactive: hashing, background: hashing };
  }
  const { apiKey, model, concurrency, timeoutMs } = config.embedder;
  const endpoint = new EmbeddingsEndpoint({ baseUrl: endpoints.embeddingsUrl!, apiKey, model, concurrency, timeoutMs });
  return { interactive: new OpenAICompatibleEmbeddings(endpoint), background: new OpenAICompatibleEmbeddings(endpoint, { lane: 'background' }), endpoint };
}

/**
 * The extraction recall net needs the e5 model its thresholds were calibrated on (docs/extraction.md);
 * with another embedder (or the hashing fallback) the offline rules run alone.
 */
function createExtractionNet(config: AppConfig, endpoint: EmbeddingsEndpoint | undefined): ExtractionNet | undefined {
  if (config.embedder.provider !== 'openai-compatible' || !/e5/iu.test(config.embedder.model) || !endpoint) return undefined;
  return new ExtractionNet(new E5StatementEncoder(endpoint));
}

export function createExtractor(config: AppConfig, endpoint: EmbeddingsEndpoint | undefined, rules: RuleWork): Extractor {
  const offline = new OfflineExtractor(createExtractionNet(config, endpoint), undefined, rules);
  if (config.llm.provider === 'none') return offline;
  // The offline rules stay as the safe fallback when the model's output is unusable.
  return new LlmExtractor(createChatModel(config.llm), offline, config.llm.model);
}
