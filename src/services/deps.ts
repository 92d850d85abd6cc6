import type pg from 'pg';
import type { Embeddings } from '@langchain/core/embeddings';
import type { EpisodeVectorIndex } from '../core/episodes/ports';
import type { ConflictJudge, QueryRewriter, VectorIndex } from '../core/ports';
import type { AppConfig } from '../config';
import type { Extractor } from './extractor';

/** Everything the services and activities need, wired once by the worker / API entry points. */
export interface ServiceDeps {
  pool: pg.Pool;
  vectors: VectorIndex;
  /** Episode summaries' vectors (`${CHROMA_COLLECTION}_episodes`); without it episodes are found by keywords and dates only. */
  episodeVectors?: EpisodeVectorIndex;
  embeddings: Embeddings;
  extractor: Extractor;
  /** Present when an LLM is configured; recall uses it only when a request or RECALL_QUERY_REWRITE asks. */
  queryRewriter?: QueryRewriter;
  /** The LLM conflict resolver (present when an LLM is configured and CONFLICT_RESOLVER is not "rules"). */
  conflictJudge?: ConflictJudge;
  config: Pick<AppConfig, 'extraction' | 'recall' | 'llm' | 'proactive' | 'lifecycle'>;
}
