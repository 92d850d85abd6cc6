/**
 * What a recall is asked and answers (its options, its result, the ports it reads), and the request
 * read once that every stage of recall works from. Imports nothing of the stages, which import it.
 */
import type { ErrorCode as Code } from '../core/errors';
import type { Bm25WithMemories, MemoryLists, RecallReads } from '../core/recall/memory-lists';
import { ALL_ROUTES, type RecallRoute } from '../core/recall/routes';
import { sanitizeQuery } from '../core/recall/sanitize-query';
import type { MemoryScope, MemorySource, MemoryType, MemoryVia } from '../core/types';
import type { Hydration } from './hydration';
import { QueryEmbeddings } from './retrievers/query-embeddings';
import type { ServiceDeps } from '../shared/deps';
import type { EpisodicDeps, RecalledExchange } from './episodic-recall';
import type { ExchangeRoute } from './exchange-search';

export interface RecallOptions {
  topK?: number;
  tokenBudget?: number;
  types?: MemoryType[];
  recentMessages?: string[];
  now?: Date;
  /** IANA zone for date expressions and rendered dates; default: the user's stored zone. */
  timeZone?: string;
  /** Zone to use when neither `timeZone` nor a stored zone is known (e.g. from the offset of `now`). */
  fallbackTimeZone?: string;
  timeoutMs?: number;
  /** Restrict the routes (evaluation measures each route's contribution this way). */
  routes?: RecallRoute[];
  /**
   * Ask the configured LLM for extra queries (pronouns resolved from `recentMessages`) and search
   * them with the ANN and BM25 routes too. Default: the `RECALL_QUERY_REWRITE` policy (off).
   */
  rewrite?: boolean;
}

export interface RecalledMemory {
  id: string;
  text: string;
  type: MemoryType;
  scope: MemoryScope;
  score: number;
  routes: string[];
  createdAt: string;
  source: MemorySource;
  via: MemoryVia;
}

/**
 * What a caller of recall hands over once the answer is computed, never awaited by it (recall
 * reinforcement, the recall-nudge check): the memories it put in front of the model, by id and type.
 */
export type AfterRecall = (userKey: string, recalled: readonly Pick<RecalledMemory, 'id' | 'type'>[], at: Date) => void;

export interface RecallResult {
  context: { system: string; userPrefix: string };
  memories: RecalledMemory[];
  tokens: number;
  /** Set when a route failed or timed out; the context still holds what the other routes found. */
  error?: { code: Code; message: string; routes: string[] };
  routes: { route: RecallRoute | ExchangeRoute | 'rewrite' | 'follow_up' | 'persona' | 'scenes'; ok: boolean; ms: number; hits: number }[];
  /** The persona injected at the top of `context.system`: the memories it states are not repeated in the memories block. */
  persona?: { memoryIds: string[]; builder: string; builtAt: string };
  /** The extra queries the LLM rewrite proposed and recall searched (memories they found carry the route "rewrite"). */
  rewrittenQueries?: string[];
  /** The past exchanges injected into `context.userPrefix` (after the memories), best first. */
  pastExchanges: RecalledExchange[];
  /** Ids of every message injected (the messages of `pastExchanges`), so a client can cite them. */
  injectedMessageIds: string[];
  /** Date ranges read from the query (the time route), when it named any. */
  dateRanges?: { text: string; start: string; end: string }[];
  /** Set when the query was read as a vague follow-up ("还是不行", "it's happening again"): the open pain point it was taken to mean. */
  followUp?: { memoryId: string | null };
}

export const CANDIDATES_PER_ROUTE = 20;
/** The importance route is a short list of high/critical memories: it lifts what matters most, it does not flood. */
export const IMPORTANT_K = 5;
/** Memories of the type route, and standing instructions loaded beside the routes. */
export const TYPE_K = 10;
/** Candidates of the recent route: the last touched memories say little about relevance, so half a route's share. */
export const RECENT_K = Math.floor(CANDIDATES_PER_ROUTE / 2);

/** What recall reads: the memory ports, the vector index and embedder, the optional rewriter, the persona and scenes; the episodic routes' stores. */
export type RecallDeps = Pick<ServiceDeps, 'memories' | 'timeRoute' | 'vectors' | 'embedder' | 'config' | 'queryRewriter' | 'settings' | 'personas' | 'scenes'> &
  EpisodicDeps &
  Partial<Pick<ServiceDeps, 'graphRecall' | 'recallLists' | 'exchangeIndex' | 'workingSets'>>;

/** One recall request, read once: every stage works from it. */
export interface RecallRequest {
  userId: string;
  options: RecallOptions;
  /** The sanitised query. */
  query: string;
  /** The query vectors of this request: the routes that search by vector share one embedding per text. */
  embeddings: QueryEmbeddings;
  enabled: ReadonlySet<RecallRoute>;
  types?: MemoryType[];
  now: Date;
  /** Epoch ms the request started, and after which a route counts as failed. */
  started: number;
  deadline: number;
  /**
   * The importance, type and instruction lists, and the persona and the scene block whenever the
   * stable prefix wants them: read in one statement when the store offers it (startMemoryLists).
   */
  lists?: Promise<MemoryLists>;
  /** Memory BM25 with its memories, one statement beside the lists' (startMemoryLists). */
  bm25?: Promise<Bm25WithMemories>;
  /** Where this request's lists, memory BM25 and hydration read: the user's held working set, when the process holds one. */
  reads?: RecallReads;
  /** The memories the routes found, loaded as each route answers (hydration.ts). */
  hydration?: Hydration;
}

export function recallRequest(deps: Pick<RecallDeps, 'config' | 'embedder'>, userId: string, message: string, options: RecallOptions): RecallRequest {
  const started = Date.now();
  const query = sanitizeQuery(message);
  return {
    userId,
    options,
    query,
    embeddings: new QueryEmbeddings(deps.embedder),
    enabled: new Set(options.routes ?? ALL_ROUTES),
    types: options.types && options.types.length > 0 ? options.types : undefined,
    now: options.now ?? new Date(),
    started,
    deadline: started + (options.timeoutMs ?? deps.config.recall.timeoutMs),
  };
}
