import type { ErrorCode as Code } from '../core/errors';
import { metrics } from '../observability/metrics';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { IMPORTANCE_LEVEL_THRESHOLDS } from '../core/lifecycle/importance';
import type { RankedExchange } from '../core/recall/exchanges';
import { COMPACT_BELOW_TOKENS, formatContext } from '../core/recall/format';
import { latestOpenPainPoint } from '../core/recall/follow-up';
import { isFillerExchange, withoutFiller } from '../core/recall/filler';
import { vectorEvidenceFloor } from '../core/recall/exchange-evidence';
import { onMemoryRrfScale, rankForInjection, type JointExchange } from '../core/recall/inject';
import type { MemoryLists } from '../core/recall/memory-lists';
import { planRoutes } from '../core/recall/query-intent';
import { shouldRewrite } from '../core/recall/query-rewrite';
import { rankMemories, type RankedMemory } from '../core/recall/rank';
import { fuseRankings, type FusedCandidate, type RouteRanking } from '../core/recall/rrf';
import { sanitizeQuery } from '../core/recall/sanitize-query';
import { tokenizeForIndex } from '../adapters/text/jieba';
import { MemoryAnnRetriever } from '../adapters/retrievers/ann-retriever';
import { MemoryBm25Retriever } from '../adapters/retrievers/bm25-retriever';
import { memoryIds } from '../adapters/retrievers/memory-route';
import { ExchangeRetriever, exchangesOf } from '../adapters/retrievers/exchange-retriever';
import { QueryEmbeddings } from '../adapters/retrievers/query-embeddings';
import type { DateRange } from '../core/time/query-dates';
import type { Memory, MemoryScope, MemorySource, MemoryType, MemoryVia } from '../core/types';
import { withDeadline } from './deadline';
import { isVagueFollowUp } from './follow-up-net';
import type { ServiceDeps } from '../shared/deps';
import { EXCHANGE_RRF_K, type ExchangeRoute, type ExchangeSearchResult } from './exchange-search';
import {
  exchangeSearchForRecall,
  hasExchangeEvidence,
  inRangeFirst,
  lastExchangeAbout,
  MAX_PAST_EXCHANGES,
  planEpisodic,
  recalledExchanges,
  resolveTimeZone,
  resolveTimeZoneWithoutStore,
  toPastExchanges,
  type EpisodicPlan,
  type RecalledExchange,
} from './episodic-recall';
import { personaForRecall, startPersona, type RecalledPersona } from './persona-recall';
import { scenesForRecall, startScenes, type RecalledScenes } from './scenes-recall';
import { graphRouteIds } from './graph-route';
import { foldRouteFailures, settleRoutes, startRoute, type RouteFailure, type RouteTask, type StartedRoute } from './route-runner';
import { ALL_ROUTES, RecallRoute } from '../core/recall/routes';

export { ALL_ROUTES, RecallRoute } from '../core/recall/routes';
/** The episodic routes (dates and past exchanges); without them recall reads memories only, unchanged. */
export const EPISODIC_ROUTES: readonly RecallRoute[] = ['time', 'exchanges'];

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

const CANDIDATES_PER_ROUTE = 20;
/** The importance route is a short list of high/critical memories: it lifts what matters most, it does not flood. */
const IMPORTANT_K = 5;
/** Memories of the type route, and standing instructions loaded beside the routes. */
const TYPE_K = 10;
/** Hydration may take this long past the routes' deadline. */
const HYDRATE_GRACE_MS = 1000;

/** What recall reads: the memory ports, the vector index and embedder, the optional rewriter; the message and episode stores for the episodic routes. */
export type RecallDeps = Pick<
  ServiceDeps,
  'memories' | 'timeRoute' | 'vectors' | 'embedder' | 'config' | 'queryRewriter' | 'messageSearch' | 'episodes' | 'settings' | 'personas' | 'scenes' | 'episodeVectors' | 'exchangeVectors'
> &
  Partial<Pick<ServiceDeps, 'graphRecall' | 'recallLists'>>;

/** One recall request, read once: every stage works from it. */
interface RecallRequest {
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
  /** The importance, type and instruction lists, read in one statement when the store offers it (startMemoryLists). */
  lists?: Promise<MemoryLists>;
}

function recallRequest(deps: Pick<RecallDeps, 'config' | 'embedder'>, userId: string, message: string, options: RecallOptions): RecallRequest {
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

// ─── Stage 1: route planning ───────────────────────────────────────────────────────────────────

/**
 * The memory routes a query runs (the time route comes later, once the query's dates are read):
 * ANN when there is a query, BM25, recency when the query asks for it (or the caller names it),
 * importance, and the type route when types are asked for or implied by the query.
 */
export function planMemoryRoutes(query: string, options: Pick<RecallOptions, 'routes' | 'types'> = {}): RecallRoute[] {
  const enabled = new Set(options.routes ?? ALL_ROUTES);
  const plan = planRoutes(query);
  const types = options.types && options.types.length > 0 ? options.types : plan.types;
  const routes: RecallRoute[] = [];
  if (enabled.has('ann') && query.length > 0) routes.push('ann');
  if (enabled.has('bm25')) routes.push('bm25');
  if (enabled.has('recent') && (plan.recent || options.routes?.includes('recent'))) routes.push('recent');
  if (enabled.has('important')) routes.push('important');
  if (enabled.has('type') && types.length > 0) routes.push('type');
  return routes;
}

/** The search behind one memory route. */
function memoryRouteTask(deps: RecallDeps, req: RecallRequest, route: RecallRoute): RouteTask<RecallRoute, string[]> {
  const { userId, types, now } = req;
  const run = (): Promise<string[]> => {
    switch (route) {
      case 'ann':
        return annHits(deps, req, req.query).then((hits) => hits.map((h) => h.id));
      case 'bm25':
        // The words of the last two chat lines count too (a follow-up rarely repeats its subject).
        return bm25Ids(deps, req, req.query, (req.options.recentMessages ?? []).slice(-2));
      case 'recent':
        return deps.memories.recent({ userId, k: Math.floor(CANDIDATES_PER_ROUTE / 2), types });
      case 'important':
        if (req.lists) return req.lists.then((l) => l.important);
        return deps.memories.mostImportant({ userId, k: IMPORTANT_K, types, now, minImportance: IMPORTANCE_LEVEL_THRESHOLDS.high });
      case 'type':
        if (req.lists) return req.lists.then((l) => l.byTypes.map((m) => m.id));
        return deps.memories.byTypes({ userId, types: types ?? planRoutes(req.query).types, k: TYPE_K, now }).then((ms) => ms.map((m) => m.id));
      case 'time':
      case 'exchanges':
      case 'graph':
        throw new Error(`${route} is not a memory route`);
    }
  };
  return { route, run };
}

/**
 * The ANN route for one query text, through its LangChain retriever: the user's nearest vectors
 * (Chroma through LangChain's store), the query embedded once per request.
 */
async function annHits(deps: Pick<RecallDeps, 'vectors'>, req: RecallRequest, text: string): Promise<{ id: string; similarity: number }[]> {
  const retriever = new MemoryAnnRetriever({ vectors: deps.vectors, embeddings: req.embeddings, userId: req.userId, k: CANDIDATES_PER_ROUTE, types: req.types });
  return (await retriever.invoke(text)).map((d) => ({ id: d.id!, similarity: d.metadata.similarity ?? 0 }));
}

/** The BM25 route for one query text (and the chat lines before it), through its LangChain retriever; ids best first. */
async function bm25Ids(deps: Pick<RecallDeps, 'memories'>, req: RecallRequest, text: string, context: string[] = []): Promise<string[]> {
  return memoryIds(await new MemoryBm25Retriever({ memories: deps.memories, userId: req.userId, k: CANDIDATES_PER_ROUTE, types: req.types, context }).invoke(text));
}

/** The exchanges route through its LangChain retriever, with the search's own sub-route report and failures. */
async function retrieveExchanges(search: (query: string) => Promise<ExchangeSearchResult>, query: string): Promise<ExchangeSearchResult> {
  let outcome: ExchangeSearchResult | undefined;
  const docs = await new ExchangeRetriever({ search, onSearched: (o) => (outcome = o) }).invoke(query);
  return { exchanges: exchangesOf(docs), routes: outcome?.routes ?? [], failures: outcome?.failures ?? [] };
}

/**
 * The episodic plan (what was said when, not only what was distilled), read while the memory routes run: the user's zone (a failed
 * lookup is reported as the time route's and the request's zone or UTC stands in) and the dates
 * the query names. Undefined when both episodic routes are off: recall is then what it was.
 */
async function planEpisodicRoutes(deps: RecallDeps, req: RecallRequest, failures: RouteFailure[]): Promise<EpisodicPlan | undefined> {
  if (!req.enabled.has('time') && !req.enabled.has('exchanges')) return undefined;
  const { timeZone: explicit, fallbackTimeZone } = req.options;
  let timeZone: string;
  try {
    timeZone = await withDeadline(resolveTimeZone(deps, req.userId, explicit, fallbackTimeZone), req.deadline);
  } catch (err) {
    failures.push({ route: 'time', err });
    timeZone = resolveTimeZoneWithoutStore(explicit, fallbackTimeZone);
  }
  return planEpisodic(req.query, { now: req.now, timeZone, timeRoute: req.enabled.has('time') });
}

/**
 * One statement for the importance route, the type route and the standing instructions (one round
 * trip instead of three). If it fails, each of them fails as it would have alone: the two routes
 * are reported failed, the instructions as the hydrate step's; ANN, BM25 and the rest still answer.
 */
function startMemoryLists(deps: RecallDeps, req: RecallRequest, planned: readonly RecallRoute[]): Promise<MemoryLists> | undefined {
  if (!deps.recallLists) return undefined;
  const lists = deps.recallLists.memoryLists({
    userId: req.userId,
    now: req.now,
    ...(planned.includes('important') ? { important: { k: IMPORTANT_K, minImportance: IMPORTANCE_LEVEL_THRESHOLDS.high, ...(req.types ? { types: req.types } : {}) } } : {}),
    ...(planned.includes('type') ? { byTypes: { types: req.types ?? planRoutes(req.query).types, k: TYPE_K } } : {}),
    instructions: { k: TYPE_K },
  });
  lists.catch(() => {});
  return lists;
}

// ─── Stage 2: parallel route execution ─────────────────────────────────────────────────────────

interface RewriteOutcome {
  ok: boolean;
  ms: number;
  queries: string[];
  /** One ranking per rewritten query and route, all named "rewrite" so RRF sums them. */
  rankings: RouteRanking[];
}

/**
 * The optional LLM rewrite, off the default hot path because a model call costs more than every
 * other route together: nothing happens unless the request or the RECALL_QUERY_REWRITE policy
 * asks. It runs beside the ordinary routes, so their results never wait on the model beyond its
 * own budget (RECALL_REWRITE_TIMEOUT_MS); whatever goes wrong is reported in `failures` and the
 * original query's results stand.
 */
function startRewriteSearch(deps: RecallDeps, req: RecallRequest, failures: RouteFailure[]): Promise<RewriteOutcome> | undefined {
  const recent = req.options.recentMessages ?? [];
  if (!shouldRewrite(deps.config.recall.queryRewrite, req.options.rewrite, req.query, recent)) return undefined;
  if (!req.enabled.has('ann') && !req.enabled.has('bm25')) return undefined;
  const rewriter = deps.queryRewriter;
  if (!rewriter) {
    failures.push({ route: 'rewrite', err: new MemoryServiceError(ErrorCode.llmUnavailable, 'query rewrite was asked for, but no LLM is configured (LLM_PROVIDER=none)') });
    return Promise.resolve({ ok: false, ms: 0, queries: [], rankings: [] });
  }
  const rewriteDeadline = Math.min(req.deadline, req.started + deps.config.recall.rewriteTimeoutMs);
  const run = async (): Promise<RewriteOutcome> => {
    const t0 = Date.now();
    const abort = new AbortController();
    let queries: string[];
    try {
      queries = await withDeadline(rewriter.rewrite({ query: req.query, recentMessages: recent, signal: abort.signal }), rewriteDeadline);
    } catch (err) {
      abort.abort();
      failures.push({ route: 'rewrite', err });
      return { ok: false, ms: Date.now() - t0, queries: [], rankings: [] };
    }
    const searches = queries.flatMap((q) => [
      ...(req.enabled.has('ann') ? [async () => (await annHits(deps, req, q)).map((h) => h.id)] : []),
      ...(req.enabled.has('bm25') ? [() => bm25Ids(deps, req, q)] : []),
    ]);
    const settled = await Promise.allSettled(searches.map((search) => withDeadline(search(), req.deadline)));
    const rankings = settled.flatMap((s) => (s.status === 'fulfilled' ? [{ route: 'rewrite', ids: s.value }] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) failures.push({ route: 'rewrite', err: failed.reason });
    return { ok: !failed, ms: Date.now() - t0, queries, rankings };
  };
  return run();
}

/** The user's global standing instructions, loaded beside the routes; awaited by the fusion stage. */
function startInstructions(deps: Pick<RecallDeps, 'memories'>, req: RecallRequest): Promise<Memory[]> {
  const loading = req.lists ? req.lists.then((l) => l.instructions) : deps.memories.byTypes({ userId: req.userId, types: ['instruction'], k: TYPE_K, scope: 'global', now: req.now });
  // Observed now; the fusion stage reports a failure as the hydrate step's.
  loading.catch(() => {});
  return loading;
}

// ─── Stage 3: fusion ───────────────────────────────────────────────────────────────────────────

/** What fusion found: the fused candidates, the memories still active among them, the instructions. */
interface Fused {
  fused: FusedCandidate[];
  fusedById: Map<string, FusedCandidate>;
  hydrated: Memory[];
  instructions: Memory[];
}

/**
 * Fuses the routes' rankings with RRF and loads the fused memories that are still active and
 * unexpired (with the instructions); a failed load is reported as `hydrate` and leaves both empty.
 */
async function fuseAndHydrate(deps: Pick<RecallDeps, 'memories'>, req: RecallRequest, rankings: RouteRanking[], instructions: Promise<Memory[]>, failures: RouteFailure[]): Promise<Fused> {
  const fused = fuseRankings(rankings);
  const out: Fused = { fused, fusedById: new Map(fused.map((f) => [f.id, f])), hydrated: [], instructions: [] };
  try {
    [out.instructions, out.hydrated] = await withDeadline(
      Promise.all([instructions, deps.memories.getActive({ userId: req.userId, ids: fused.map((f) => f.id), now: req.now })]),
      req.deadline + HYDRATE_GRACE_MS,
    );
  } catch (err) {
    failures.push({ route: 'hydrate', err });
  }
  // A memory waiting for the user's confirmation (an instruction an agent wrote) is not recalled:
  // not as a standing instruction, not as reference data, not as a search result.
  out.instructions = out.instructions.filter((m) => !m.pending);
  out.hydrated = out.hydrated.filter((m) => !m.pending);
  return out;
}

/**
 * Ranks the hydrated memories by fused relevance, decay, importance and type, best `maxResults`;
 * with a date in the query, memories said on that date come first, then the rest by score.
 */
export function rankFused(input: { fused: readonly FusedCandidate[]; hydrated: readonly Memory[]; now: Date; maxResults: number; ranges: readonly DateRange[] }): RankedMemory<Memory>[] {
  const byId = new Map(input.hydrated.map((m) => [m.id, m]));
  const candidates = input.fused.flatMap((f) => (byId.has(f.id) ? [{ memory: byId.get(f.id)!, relevance: f.score }] : []));
  const ranked = rankMemories(candidates, { now: input.now, maxResults: input.ranges.length > 0 ? Number.MAX_SAFE_INTEGER : input.maxResults });
  return inRangeFirst(ranked, input.ranges, (r) => r.memory.createdAt).slice(0, input.maxResults);
}

// ─── Stage 4: past exchanges and vague follow-ups ────────────────────────────────────────────────

/** The exchanges searched beside the routes; their route lines and failures join the request's. */
async function settleExchanges(search: Promise<ExchangeSearchResult> | undefined, report: RecallResult['routes'], failures: RouteFailure[]): Promise<RankedExchange[]> {
  if (!search) return [];
  const result = await search;
  report.push(...result.routes);
  failures.push(...result.failures);
  return result.exchanges;
}

/** What a vague follow-up was taken to mean: the latest open pain point and its last exchange. */
interface FollowUpOutcome {
  memory?: Memory;
  exchange?: RankedExchange;
}

/** Open pain points read for a vague follow-up; the newest open one is taken. */
const FOLLOW_UP_PAIN_POINTS = 20;

/**
 * A vague follow-up ("还是不行", "it's happening again") names nothing the routes could match: it
 * is read as being about the user's most recent open pain point, fetched beside the routes with
 * the last exchange about it. Undefined when the query is not such a follow-up.
 */
function startFollowUp(deps: RecallDeps, req: RecallRequest, report: RecallResult['routes'], failures: RouteFailure[]): Promise<FollowUpOutcome | undefined> | undefined {
  if (!req.enabled.has('type') || (req.types && !req.types.includes('pain_point'))) return undefined;
  const vague = isVagueFollowUp(deps, req.query, () => req.embeddings.embedQuery(req.query), req.deadline);
  const run = async (): Promise<FollowUpOutcome | undefined> => {
    if (!(await vague)) return undefined;
    const t0 = Date.now();
    const out: FollowUpOutcome = {};
    try {
      const painPoints = await withDeadline(deps.memories.byTypes({ userId: req.userId, types: ['pain_point'], k: FOLLOW_UP_PAIN_POINTS, now: req.now }), req.deadline);
      out.memory = latestOpenPainPoint(painPoints, req.now);
      if (out.memory && req.enabled.has('exchanges')) {
        const last = await lastExchangeAbout(deps, req.userId, { tokens: tokenizeForIndex(out.memory.text), now: req.now, deadline: req.deadline });
        failures.push(...last.search.failures);
        if (last.exchange) out.exchange = last.exchange;
      }
      report.push({ route: 'follow_up', ok: true, ms: Date.now() - t0, hits: out.memory ? 1 : 0 });
    } catch (err) {
      failures.push({ route: 'follow_up', err });
      report.push({ route: 'follow_up', ok: false, ms: Date.now() - t0, hits: 0 });
    }
    return out;
  };
  return run();
}

/**
 * Memories and exchanges on one score for the budget (inject.ts): the follow-up's pain point and
 * exchange lead, an exchange that repeats a memory is dropped, at most MAX_PAST_EXCHANGES stay.
 */
export function jointInjection(input: {
  ranked: readonly RankedMemory<Memory>[];
  exchanges: readonly RankedExchange[];
  followUp?: FollowUpOutcome;
  /** Of a duplicate pair the exchange stays (the query asks what was said, and the budget is not tight). */
  preferExchanges: boolean;
  now: Date;
}): {
  ranked: RankedMemory<Memory>[];
  exchanges: RankedExchange[];
  order: ReturnType<typeof rankForInjection>;
  /** Memory id → message ids of the exchange that carries it. */
  carriedBy: Map<string, readonly string[]>;
} {
  const ranked = [...input.ranked];
  const exchanges = [...input.exchanges];
  const pinned = new Set<string>();
  const fu = input.followUp;
  if (fu?.memory) {
    pinned.add(fu.memory.id);
    if (!ranked.some((r) => r.memory.id === fu.memory!.id)) ranked.unshift(...rankMemories([{ memory: fu.memory, relevance: ranked[0]?.relevance ?? 1 }], { now: input.now }));
  }
  if (fu?.exchange) {
    pinned.add(fu.exchange.key);
    const at = exchanges.findIndex((x) => x.key === fu.exchange!.key);
    if (at >= 0) exchanges.splice(at, 1);
    exchanges.unshift(fu.exchange);
  }
  const past = toPastExchanges(exchanges);
  // The exchange search fuses with its own small k: its sums are put on the memories' RRF scale.
  const joint: JointExchange[] = exchanges.map((x, i) => ({ key: x.key, conversationId: x.conversationId, exchange: past[i]!, score: onMemoryRrfScale(x.score, x.routes.length, EXCHANGE_RRF_K) }));
  const order = rankForInjection({
    memories: ranked.map((r) => ({ memory: r.memory, score: r.score })),
    exchanges: joint,
    pinned,
    maxExchanges: MAX_PAST_EXCHANGES,
    prefer: input.preferExchanges ? 'exchange' : 'memory',
  });
  const kept = new Set(order.items.flatMap((i) => (i.kind === 'exchange' ? [i.exchange] : [])));
  const messagesOf = new Map(exchanges.map((x) => [x.key, x.messageIds]));
  const carriedBy = new Map([...order.carried].map(([memoryId, key]) => [memoryId, messagesOf.get(key) ?? []]));
  return { ranked, exchanges: exchanges.filter((_, i) => kept.has(past[i]!)), order, carriedBy };
}

// ─── Stage 5: budgeting and formatting ─────────────────────────────────────────────────────────

/**
 * Formats what was found for the prompt within the token budget (the persona within its share,
 * then instructions, then the memories and past exchanges in the joint order of `injection`, or
 * memories before exchanges without it; a memory the persona states is not repeated) and builds the response: only what made it into the context is listed, and route
 * failures fold into `error`.
 */
export function buildRecallResult(input: {
  ranked: readonly RankedMemory<Memory>[];
  instructions: readonly Memory[];
  exchanges: readonly RankedExchange[];
  injection?: ReturnType<typeof rankForInjection>['items'];
  /** Memories left out in favour of the exchange that is their source: listed when that exchange is injected. */
  carriedBy?: ReadonlyMap<string, readonly string[]>;
  followUp?: FollowUpOutcome;
  fusedById: ReadonlyMap<string, FusedCandidate>;
  budget: number;
  timeZone?: string;
  routes: RecallResult['routes'];
  failures: readonly RouteFailure[];
  rewrittenQueries?: string[];
  ranges: readonly DateRange[];
  persona?: RecalledPersona;
  personaShare?: number;
  scenes?: RecalledScenes;
  scenesShare?: number;
}): RecallResult {
  const formatted = formatContext({
    ...personaForRecall(input.persona, input.personaShare),
    ...scenesForRecall(input.scenes, input.scenesShare ?? 0),
    memories: input.ranked.map((r) => r.memory),
    instructions: input.instructions,
    pastExchanges: toPastExchanges(input.exchanges),
    ...(input.injection ? { injection: input.injection } : {}),
    budget: input.budget,
    timeZone: input.timeZone,
  });
  // A found memory the persona states is in the context too (in the persona's words): it is listed.
  const included = new Set([...formatted.included, ...(formatted.personaMemoryIds ?? [])]);
  const injectedMessages = new Set(formatted.includedMessageIds);
  for (const [id, messageIds] of input.carriedBy ?? []) if (messageIds.length > 0 && messageIds.every((m) => injectedMessages.has(m))) included.add(id);
  const scoreOf = new Map(input.ranked.map((r) => [r.memory.id, r.score]));
  const memories: RecalledMemory[] = [...input.instructions, ...input.ranked.map((r) => r.memory)]
    .filter((m, i, all) => included.has(m.id) && all.findIndex((x) => x.id === m.id) === i)
    .map((m) => ({
      id: m.id,
      text: m.text,
      type: m.type,
      scope: m.scope,
      score: scoreOf.get(m.id) ?? 1,
      routes: input.fusedById.get(m.id)?.routes ?? ['instruction'],
      createdAt: m.createdAt.toISOString(),
      source: m.source,
      via: m.via,
    }));
  const error = foldRouteFailures(input.failures);
  return {
    context: { system: formatted.system, userPrefix: formatted.userPrefix },
    memories,
    tokens: formatted.tokens,
    routes: input.routes,
    pastExchanges: recalledExchanges(input.exchanges, formatted.includedMessageIds),
    injectedMessageIds: formatted.includedMessageIds,
    ...(input.rewrittenQueries ? { rewrittenQueries: input.rewrittenQueries } : {}),
    ...(input.persona && formatted.personaMemoryIds ? { persona: { memoryIds: formatted.personaMemoryIds, builder: input.persona.builder, builtAt: input.persona.builtAt.toISOString() } } : {}),
    ...(input.ranges.length > 0 ? { dateRanges: input.ranges.map((r) => ({ text: r.text, start: r.start.toISOString(), end: r.end.toISOString() })) } : {}),
    ...(input.followUp ? { followUp: { memoryId: input.followUp.memory?.id ?? null } } : {}),
    ...(error ? { error } : {}),
  };
}

// ─── Recall ────────────────────────────────────────────────────────────────────────────────────

/**
 * Hybrid recall for one chat message: ANN (vector index) ∥ BM25 (PostgreSQL postings,
 * jieba-segmented) ∥ recency/importance ∥ type ∥ time routes, fused with RRF, ranked by decay ×
 * importance × type priority, cut to the token budget and formatted for the prompt. Never throws
 * for a dependency failure: the failed routes are named in `error` and the others still contribute.
 */
export async function recall(deps: RecallDeps, userId: string, message: string, options: RecallOptions = {}): Promise<RecallResult> {
  const startedAt = Date.now();
  const req = recallRequest(deps, userId, message, options);
  const failures: RouteFailure[] = [];
  const planned = planMemoryRoutes(req.query, options);
  req.lists = startMemoryLists(deps, req, planned);
  const running: StartedRoute<RecallRoute, string[]>[] = planned.map((route) => startRoute(memoryRouteTask(deps, req, route), req.deadline));
  const instructions = startInstructions(deps, req);
  // The persona (L3): one keyed row, read beside the routes; only for a full context (no route restriction).
  const persona = options.routes ? undefined : startPersona(deps, req.userId, req.now, req.deadline);
  const scenes = options.routes || deps.config.recall.scenesShare <= 0 ? undefined : startScenes(deps, req.userId, req.deadline);
  const rewrite = startRewriteSearch(deps, req, failures);

  const episodic = await planEpisodicRoutes(deps, req, failures);
  const ranges = episodic?.ranges ?? [];
  if (ranges.length > 0) running.push(startRoute({ route: 'time', run: () => deps.timeRoute.memoriesSaidIn({ userId, ranges, k: CANDIDATES_PER_ROUTE, now: req.now }) }, req.deadline));
  const graph = deps.graphRecall;
  if (graph && req.enabled.has('graph') && req.query.length > 0) {
    running.push(startRoute({ route: 'graph', run: () => graphRouteIds(graph, { userId, query: req.query, now: req.now, k: CANDIDATES_PER_ROUTE }) }, req.deadline));
  }
  const queryTokens = req.enabled.has('exchanges') ? tokenizeForIndex(req.query) : [];
  // Every query searches past exchanges alongside the memory routes (through the exchanges
  // retriever), sharing the request's query embedding; an exchange close enough by vector counts
  // as evidence even when it shares none of the query's words (a paraphrase).
  const minVectorSimilarity = vectorEvidenceFloor(req.query, deps.config.recall.exchangeMinSimilarity);
  const exchangeSearch =
    episodic && req.enabled.has('exchanges') && hasExchangeEvidence(queryTokens, episodic)
      ? retrieveExchanges(
          (q) =>
            exchangeSearchForRecall(deps, userId, {
              // The query was segmented once above (jieba is the costliest CPU step of a recall).
              tokens: q === req.query ? queryTokens : tokenizeForIndex(q),
              plan: episodic,
              now: req.now,
              deadline: req.deadline,
              embedding: () => req.embeddings.embedQuery(q),
              ...(minVectorSimilarity !== undefined ? { minVectorSimilarity } : {}),
            }),
          req.query,
        )
      : undefined;
  const followUpReport: RecallResult['routes'] = [];
  const followUp = startFollowUp(deps, req, followUpReport, failures);

  const routes = await settleRoutes(running, { since: req.started, hits: (ids) => ids.length });
  failures.push(...routes.failures);
  const report: RecallResult['routes'] = [...routes.report];
  const rankings: RouteRanking[] = routes.results.map((r) => ({ route: r.route, ids: r.value }));
  const rewritten = rewrite ? await rewrite : undefined;
  if (rewritten) {
    report.push({ route: 'rewrite', ok: rewritten.ok, ms: rewritten.ms, hits: new Set(rewritten.rankings.flatMap((r) => r.ids)).size });
    rankings.push(...rewritten.rankings);
  }

  const fused = await fuseAndHydrate(deps, req, rankings, instructions, failures);
  const topRanked = rankFused({ fused: fused.fused, hydrated: fused.hydrated, now: req.now, maxResults: options.topK ?? 8, ranges });
  const found = await settleExchanges(exchangeSearch, report, failures);
  const followed = followUp ? await followUp : undefined;
  report.push(...followUpReport);
  const budget = options.tokenBudget ?? deps.config.recall.tokenBudget;
  // Under a tight budget the compact memory line beats the long exchange it came from, whatever the question.
  const preferExchanges = (episodic?.asksWhatWasSaid ?? false) && budget >= COMPACT_BELOW_TOKENS;
  // Small talk never enters the context, whatever the query (core/recall/filler.ts).
  const joint = jointInjection({ ranked: withoutFiller(topRanked, (r) => r.memory.text), exchanges: found.filter((x) => !isFillerExchange(x)), ...(followed ? { followUp: followed } : {}), preferExchanges, now: req.now });
  const personaRead = persona ? await persona : undefined;
  if (personaRead) {
    report.push(...personaRead.report);
    failures.push(...personaRead.failures);
  }
  const scenesRead = scenes ? await scenes : undefined;
  if (scenesRead) {
    report.push(...scenesRead.report);
    failures.push(...scenesRead.failures);
  }
  const result = buildRecallResult({
    persona: personaRead?.persona,
    personaShare: deps.config.recall.personaShare,
    scenes: scenesRead?.scenes,
    scenesShare: deps.config.recall.scenesShare,
    ranked: joint.ranked,
    instructions: fused.instructions,
    exchanges: joint.exchanges,
    injection: joint.order.items,
    carriedBy: joint.carriedBy,
    ...(followed ? { followUp: followed } : {}),
    fusedById: fused.fusedById,
    budget,
    timeZone: episodic?.timeZone ?? options.timeZone,
    routes: report,
    failures,
    rewrittenQueries: rewritten?.queries,
    ranges,
  });
  metrics.recall(Date.now() - startedAt, result.tokens);
  return result;
}
