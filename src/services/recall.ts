import { memoryStore } from '../adapters/postgres/memory-repository';
import { timeRouteStore } from '../adapters/postgres/time-route-repository';
import type { ErrorCode as Code } from '../core/errors';
import { IMPORTANCE_LEVEL_THRESHOLDS } from '../core/lifecycle/importance';
import { formatContext, type FormattedContext } from '../core/recall/format';
import { rankMemories } from '../core/recall/rank';
import { fuseRankings, type RouteRanking } from '../core/recall/rrf';
import { planRoutes } from '../core/recall/query-intent';
import { shouldRewrite } from '../core/recall/query-rewrite';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { sanitizeQuery } from '../core/recall/sanitize-query';
import { tokenizeForIndex } from '../adapters/text/jieba';
import type { Memory, MemoryScope, MemorySource, MemoryType } from '../core/types';
import { errorCodeOf, withDeadline } from './deadline';
import type { ServiceDeps } from './deps';
import type { ExchangeRoute, ExchangeSearchResult } from './conversation-search';
import {
  inRangeFirst,
  memoryHitsAreWeak,
  pastExchangeSearch,
  planEpisodic,
  recalledExchanges,
  resolveTimeZone,
  resolveTimeZoneWithoutStore,
  toPastExchanges,
  weakHitExchangeSearch,
  type EpisodicPlan,
  type RecalledExchange,
} from './episodic-recall';

export const RecallRoute = {
  ann: 'ann',
  bm25: 'bm25',
  recent: 'recent',
  important: 'important',
  type: 'type',
  /** Memories said on the dates the query names ("我6月2号…", "last Tuesday"), ranked first. */
  time: 'time',
  /** Past exchanges (raw user + assistant lines) for questions about the shared past or weak hits. */
  exchanges: 'exchanges',
} as const;
export type RecallRoute = (typeof RecallRoute)[keyof typeof RecallRoute];
export const ALL_ROUTES: RecallRoute[] = ['ann', 'bm25', 'recent', 'important', 'type', 'time', 'exchanges'];
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
}

export interface RecallResult {
  context: { system: string; userPrefix: string };
  memories: RecalledMemory[];
  tokens: number;
  /** Set when a route failed or timed out; the context still holds what the other routes found. */
  error?: { code: Code; message: string; routes: string[] };
  routes: { route: RecallRoute | ExchangeRoute | 'rewrite'; ok: boolean; ms: number; hits: number }[];
  /** The extra queries the LLM rewrite proposed and recall searched (memories they found carry the route "rewrite"). */
  rewrittenQueries?: string[];
  /** The past exchanges injected into `context.userPrefix` (after the memories), best first. */
  pastExchanges: RecalledExchange[];
  /** Ids of every message injected (the messages of `pastExchanges`), so a client can cite them. */
  injectedMessageIds: string[];
  /** Date ranges read from the query (the time route), when it named any. */
  dateRanges?: { text: string; start: string; end: string }[];
}

const CANDIDATES_PER_ROUTE = 20;
/** The importance route is a short list of high/critical memories: it lifts what matters most, it does not flood. */
const IMPORTANT_K = 5;


/**
 * Hybrid recall for one chat message: ANN (Chroma) ∥ BM25 (PostgreSQL postings, jieba-segmented)
 * ∥ recency/importance ∥ type routes, fused with RRF, ranked by decay × importance × type
 * priority, cut to the token budget and formatted for the prompt. Never throws for a dependency
 * failure: the failed routes are named in `error` and the others still contribute.
 */
export async function recall(deps: Pick<ServiceDeps, 'pool' | 'vectors' | 'embeddings' | 'config' | 'queryRewriter'>, userId: string, message: string, options: RecallOptions = {}): Promise<RecallResult> {
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? deps.config.recall.timeoutMs);
  const now = options.now ?? new Date();
  const query = sanitizeQuery(message);
  const enabled = new Set(options.routes ?? ALL_ROUTES);
  const k = CANDIDATES_PER_ROUTE;
  const types = options.types && options.types.length > 0 ? options.types : undefined;
  const tokens = tokenizeForIndex([query, ...(options.recentMessages ?? []).slice(-2)].join(' '));

  const annSimilarity = new Map<string, number>();
  const routeTasks: { route: RecallRoute; run: () => Promise<string[]> }[] = [];
  if (enabled.has('ann') && query.length > 0)
    routeTasks.push({
      route: 'ann',
      run: async () => {
        const hits = await annHits(deps, userId, query, types);
        for (const h of hits) annSimilarity.set(h.id, h.similarity);
        return hits.map((h) => h.id);
      },
    });
  if (enabled.has('bm25')) routeTasks.push({ route: 'bm25', run: () => bm25Ids(deps, userId, tokens, types) });
  const plan = planRoutes(query);
  if (enabled.has('recent') && (plan.recent || options.routes?.includes('recent')))
    routeTasks.push({ route: 'recent', run: () => memoryStore.recent(deps.pool, userId, Math.floor(k / 2), types) });
  if (enabled.has('important'))
    routeTasks.push({ route: 'important', run: () => memoryStore.mostImportant(deps.pool, userId, IMPORTANT_K, { types, now, minImportance: IMPORTANCE_LEVEL_THRESHOLDS.high }) });
  const routeTypes = types ?? plan.types;
  if (enabled.has('type') && routeTypes.length > 0)
    routeTasks.push({ route: 'type', run: async () => (await memoryStore.byTypes(deps.pool, userId, routeTypes, 10, { now })).map((m) => m.id) });

  const instructionsTask = memoryStore.byTypes(deps.pool, userId, ['instruction'], 10, { scope: 'global', now });
  const runRoute = async (t: (typeof routeTasks)[number]) => {
    const t0 = Date.now();
    const ids = await withDeadline(t.run(), deadline);
    return { ids, ms: Date.now() - t0 };
  };
  const running = routeTasks.map(runRoute);
  const failures: { route: string; err: unknown }[] = [];
  const rewriteSearch = startRewriteSearch(deps, userId, query, options, { enabled, types, started, deadline, failures });

  // Episodic routes, planned while the memory routes run so they add no latency; off, recall reads
  // memories only.
  let episodic: EpisodicPlan | undefined;
  if (enabled.has('time') || enabled.has('exchanges')) {
    let timeZone: string;
    try {
      timeZone = await withDeadline(resolveTimeZone(deps, userId, options.timeZone, options.fallbackTimeZone), deadline);
    } catch (err) {
      failures.push({ route: 'time', err });
      timeZone = resolveTimeZoneWithoutStore(options.timeZone, options.fallbackTimeZone);
    }
    episodic = planEpisodic(query, { now, timeZone, timeRoute: enabled.has('time') });
  }
  const ranges = episodic?.ranges ?? [];
  if (ranges.length > 0) {
    const timeTask = { route: 'time' as const, run: () => timeRouteStore.memoriesSaidIn(deps.pool, userId, ranges, k, now) };
    routeTasks.push(timeTask);
    running.push(runRoute(timeTask));
  }
  const queryTokens = enabled.has('exchanges') ? tokenizeForIndex(query) : [];
  // A question about the shared past searches exchanges alongside the memory routes.
  const pastSearch: Promise<ExchangeSearchResult> | undefined =
    episodic?.past && enabled.has('exchanges')
      ? pastExchangeSearch(deps, userId, { tokens: queryTokens, plan: episodic, now, deadline })
      : undefined;
  const settled = await Promise.allSettled(running);

  const rankings: RouteRanking[] = [];
  const routeReport: RecallResult['routes'] = [];
  settled.forEach((s, i) => {
    const route = routeTasks[i]!.route;
    if (s.status === 'fulfilled') {
      rankings.push({ route, ids: s.value.ids });
      routeReport.push({ route, ok: true, ms: s.value.ms, hits: s.value.ids.length });
    } else {
      failures.push({ route, err: s.reason });
      routeReport.push({ route, ok: false, ms: Date.now() - started, hits: 0 });
    }
  });

  let rewrittenQueries: string[] | undefined;
  if (rewriteSearch) {
    const outcome = await rewriteSearch;
    routeReport.push({ route: 'rewrite', ok: outcome.ok, ms: outcome.ms, hits: new Set(outcome.rankings.flatMap((r) => r.ids)).size });
    rankings.push(...outcome.rankings);
    rewrittenQueries = outcome.queries;
  }

  let instructions: Memory[] = [];
  let hydrated: Memory[] = [];
  const fused = fuseRankings(rankings);
  try {
    [instructions, hydrated] = await withDeadline(
      Promise.all([instructionsTask, memoryStore.getActive(deps.pool, userId, fused.map((f) => f.id), now)]),
      deadline + 1000,
    );
  } catch (err) {
    failures.push({ route: 'hydrate', err });
  }

  const byId = new Map(hydrated.map((m) => [m.id, m]));
  const fusedById = new Map(fused.map((f) => [f.id, f]));
  const maxResults = options.topK ?? 8;
  // With a date in the query, memories said on that date come first, then the rest by score.
  const ranked = inRangeFirst(
    rankMemories(
      fused.flatMap((f) => (byId.has(f.id) ? [{ memory: byId.get(f.id)!, relevance: f.score }] : [])),
      { now, maxResults: ranges.length > 0 ? Number.MAX_SAFE_INTEGER : maxResults },
    ),
    ranges,
    (r) => r.memory.createdAt,
  ).slice(0, maxResults);

  let exchangeSearch = pastSearch ? await pastSearch : undefined;
  // Only memories that survived hydration count: an expired memory's words or vector are no evidence.
  const bm25Hits = hydrated.filter((m) => fusedById.get(m.id)?.routes.includes('bm25')).length;
  const bestSimilarity = Math.max(0, ...hydrated.map((m) => annSimilarity.get(m.id) ?? 0));
  if (!exchangeSearch && episodic && enabled.has('exchanges') && queryTokens.length > 0 && memoryHitsAreWeak({ bm25Hits, bestSimilarity })) {
    exchangeSearch = await weakHitExchangeSearch(deps, userId, { tokens: queryTokens, now, deadline });
  }
  if (exchangeSearch) {
    routeReport.push(...exchangeSearch.routes);
    failures.push(...exchangeSearch.failures);
  }
  const exchanges = exchangeSearch?.exchanges ?? [];

  const formatted: FormattedContext = formatContext({
    memories: ranked.map((r) => r.memory),
    instructions,
    pastExchanges: toPastExchanges(exchanges),
    budget: options.tokenBudget ?? deps.config.recall.tokenBudget,
    timeZone: episodic?.timeZone ?? options.timeZone,
  });
  const included = new Set(formatted.included);
  const scoreOf = new Map(ranked.map((r) => [r.memory.id, r.score]));
  const memories: RecalledMemory[] = [...instructions, ...ranked.map((r) => r.memory)]
    .filter((m, i, all) => included.has(m.id) && all.findIndex((x) => x.id === m.id) === i)
    .map((m) => ({
      id: m.id,
      text: m.text,
      type: m.type,
      scope: m.scope,
      score: scoreOf.get(m.id) ?? 1,
      routes: fusedById.get(m.id)?.routes ?? ['instruction'],
      createdAt: m.createdAt.toISOString(),
      source: m.source,
    }));

  const result: RecallResult = {
    context: { system: formatted.system, userPrefix: formatted.userPrefix },
    memories,
    tokens: formatted.tokens,
    routes: routeReport,
    pastExchanges: recalledExchanges(exchanges, formatted.includedMessageIds),
    injectedMessageIds: formatted.includedMessageIds,
    ...(rewrittenQueries ? { rewrittenQueries } : {}),
    ...(ranges.length > 0 ? { dateRanges: ranges.map((r) => ({ text: r.text, start: r.start.toISOString(), end: r.end.toISOString() })) } : {}),
  };
  if (failures.length > 0) {
    const first = failures[0]!;
    result.error = {
      code: errorCodeOf(first.err),
      message: failures.map((f) => `${f.route}: ${f.err instanceof Error ? f.err.message : String(f.err)}`).join('; '),
      routes: failures.map((f) => f.route),
    };
  }
  return result;
}

/** The ANN route for one query text: the user's nearest vectors (the embedder caches queries). */
async function annHits(deps: Pick<ServiceDeps, 'vectors' | 'embeddings'>, userId: string, text: string, types?: MemoryType[]) {
  return deps.vectors.query({ userId, embedding: await deps.embeddings.embedQuery(text), k: CANDIDATES_PER_ROUTE, types });
}

/** The BM25 route for one query's tokens, ids best first. */
async function bm25Ids(deps: Pick<ServiceDeps, 'pool'>, userId: string, tokens: string[], types?: MemoryType[]): Promise<string[]> {
  return (await memoryStore.bm25(deps.pool, userId, tokens, CANDIDATES_PER_ROUTE, types)).map((h) => h.id);
}

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
function startRewriteSearch(
  deps: Pick<ServiceDeps, 'pool' | 'vectors' | 'embeddings' | 'config' | 'queryRewriter'>,
  userId: string,
  query: string,
  options: RecallOptions,
  ctx: { enabled: Set<RecallRoute>; types?: MemoryType[]; started: number; deadline: number; failures: { route: string; err: unknown }[] },
): Promise<RewriteOutcome> | undefined {
  const recent = options.recentMessages ?? [];
  if (!shouldRewrite(deps.config.recall.queryRewrite, options.rewrite, query, recent)) return undefined;
  if (!ctx.enabled.has('ann') && !ctx.enabled.has('bm25')) return undefined;
  const rewriter = deps.queryRewriter;
  if (!rewriter) {
    ctx.failures.push({ route: 'rewrite', err: new MemoryServiceError(ErrorCode.llmUnavailable, 'query rewrite was asked for, but no LLM is configured (LLM_PROVIDER=none)') });
    return Promise.resolve({ ok: false, ms: 0, queries: [], rankings: [] });
  }
  const rewriteDeadline = Math.min(ctx.deadline, ctx.started + deps.config.recall.rewriteTimeoutMs);
  const run = async (): Promise<RewriteOutcome> => {
    const t0 = Date.now();
    const abort = new AbortController();
    let queries: string[];
    try {
      queries = await withDeadline(rewriter.rewrite({ query, recentMessages: recent, signal: abort.signal }), rewriteDeadline);
    } catch (err) {
      abort.abort();
      ctx.failures.push({ route: 'rewrite', err });
      return { ok: false, ms: Date.now() - t0, queries: [], rankings: [] };
    }
    const searches = queries.flatMap((q) => [
      ...(ctx.enabled.has('ann') ? [async () => (await annHits(deps, userId, q, ctx.types)).map((h) => h.id)] : []),
      ...(ctx.enabled.has('bm25') ? [() => bm25Ids(deps, userId, tokenizeForIndex(q), ctx.types)] : []),
    ]);
    const settled = await Promise.allSettled(searches.map((search) => withDeadline(search(), ctx.deadline)));
    const rankings = settled.flatMap((s) => (s.status === 'fulfilled' ? [{ route: 'rewrite', ids: s.value }] : []));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) ctx.failures.push({ route: 'rewrite', err: failed.reason });
    return { ok: !failed, ms: Date.now() - t0, queries, rankings };
  };
  return run();
}
