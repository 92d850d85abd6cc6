/**
 * Running the memory routes: the search behind each route (ANN and BM25 through their LangChain
 * retrievers, recent, important, type) and the past-exchanges search beside them.
 */
import { IMPORTANCE_LEVEL_THRESHOLDS } from '../core/lifecycle/importance';
import type { RankedExchange } from '../core/recall/exchanges';
import { vectorEvidenceFloor } from '../core/recall/exchange-evidence';
import { planRoutes } from '../core/recall/query-intent';
import type { RecallRoute } from '../core/recall/routes';
import type { DateRange } from '../core/time/query-dates';
import { tokenizeForIndex } from '../shared/segmentation';
import { MemoryAnnRetriever } from './retrievers/ann-retriever';
import { MemoryBm25Retriever } from './retrievers/bm25-retriever';
import { memoryIds } from './retrievers/memory-route';
import { ExchangeRetriever, exchangesOf } from './retrievers/exchange-retriever';
import { exchangeSearchForRecall, hasExchangeEvidence, type EpisodicPlan } from './episodic-recall';
import type { ExchangeSearchResult } from './exchange-search';
import { graphRouteIds } from './graph-route';
import { gated, historyGate } from './history-gate';
import { bm25ChatContext } from './route-plan';
import { CANDIDATES_PER_ROUTE, IMPORTANT_K, RECENT_K, TYPE_K, type RecallDeps, type RecallRequest, type RecallResult } from './recall-request';
import type { RouteFailure, RouteTask } from './route-runner';

/** The search behind one memory route. */
export function memoryRouteTask(deps: RecallDeps, req: RecallRequest, route: RecallRoute): RouteTask<RecallRoute, string[]> {
  const { userId, types, now } = req;
  const run = (): Promise<string[]> => {
    switch (route) {
      case 'ann':
        return annHits(deps, req, req.query).then((hits) => {
          const ids = hits.map((h) => h.id);
          // Loaded now, while the other routes still run: fusion then waits for no statement of its own.
          req.hydration?.load(ids);
          return ids;
        });
      case 'bm25':
        // Read with its memories (route-plan.ts), unless the request restricts the types.
        if (req.bm25) return req.bm25.then((r) => r.hits.map((h) => h.id));
        return bm25Ids(deps, req, req.query, bm25ChatContext(req));
      case 'recent':
        if (req.lists) return req.lists.then((l) => l.recent);
        return deps.memories.recent({ userId, k: RECENT_K, types });
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
export async function annHits(deps: Pick<RecallDeps, 'vectors'>, req: RecallRequest, text: string): Promise<{ id: string; similarity: number }[]> {
  const retriever = new MemoryAnnRetriever({ vectors: deps.vectors, embeddings: req.embeddings, userId: req.userId, k: CANDIDATES_PER_ROUTE, types: req.types });
  return (await retriever.invoke(text)).map((d) => ({ id: d.id!, similarity: d.metadata.similarity ?? 0 }));
}

/** The BM25 route for one query text (and the chat lines before it), through its LangChain retriever; ids best first. */
export async function bm25Ids(deps: Pick<RecallDeps, 'memories'>, req: RecallRequest, text: string, context: string[] = []): Promise<string[]> {
  return memoryIds(await new MemoryBm25Retriever({ memories: deps.memories, userId: req.userId, k: CANDIDATES_PER_ROUTE, types: req.types, context }).invoke(text));
}

/** The exchanges route through its LangChain retriever, with the search's own sub-route report and failures. */
export async function retrieveExchanges(search: (query: string) => Promise<ExchangeSearchResult>, query: string): Promise<ExchangeSearchResult> {
  let outcome: ExchangeSearchResult | undefined;
  const docs = await new ExchangeRetriever({ search, onSearched: (o) => (outcome = o) }).invoke(query);
  return { exchanges: exchangesOf(docs), routes: outcome?.routes ?? [], failures: outcome?.failures ?? [] };
}

/**
 * Every query searches past exchanges alongside the memory routes (through the exchanges
 * retriever), sharing the request's query embedding; an exchange close enough by vector counts
 * as evidence even when it shares none of the query's words (a paraphrase). Undefined when the
 * exchanges route is off or the query gives it nothing to go on.
 */
export function startExchangeSearch(deps: RecallDeps, req: RecallRequest, episodic: EpisodicPlan | undefined): Promise<ExchangeSearchResult> | undefined {
  const queryTokens = req.enabled.has('exchanges') ? tokenizeForIndex(req.query) : [];
  const minVectorSimilarity = vectorEvidenceFloor(req.query, deps.config.recall.exchangeMinSimilarity);
  return episodic && req.enabled.has('exchanges') && hasExchangeEvidence(queryTokens, episodic)
    ? retrieveExchanges(
        (q) =>
          exchangeSearchForRecall(overHistory(deps, req), req.userId, {
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
}

/** The exchanges searched beside the routes; their route lines and failures join the request's. */
export async function settleExchanges(search: Promise<ExchangeSearchResult> | undefined, report: RecallResult['routes'], failures: RouteFailure[]): Promise<RankedExchange[]> {
  if (!search) return [];
  const result = await search;
  report.push(...result.routes);
  failures.push(...result.failures);
  return result.exchanges;
}

/** The time route (memories said on the dates the query names) and the graph route, when they apply. */
export function dateAndGraphRoutes(deps: RecallDeps, req: RecallRequest, ranges: readonly DateRange[]): RouteTask<RecallRoute, string[]>[] {
  const tasks: RouteTask<RecallRoute, string[]>[] = [];
  if (ranges.length > 0) tasks.push({ route: 'time', run: () => deps.timeRoute.memoriesSaidIn({ userId: req.userId, ranges, k: CANDIDATES_PER_ROUTE, now: req.now }) });
  const graph = deps.graphRecall;
  if (graph && req.enabled.has('graph') && req.query.length > 0) {
    const open = historyGate(req.userId, req.lists);
    tasks.push({ route: 'graph', run: () => gated(open('entities'), () => graphRouteIds(graph, { userId: req.userId, query: req.query, now: req.now, k: CANDIDATES_PER_ROUTE }), []) });
  }
  return tasks;
}

/**
 * The exchange search's stores, each route over the messages or the episodes run only when the
 * user has any (history-gate.ts): a message, an exchange vector or an exchange graph hit is shown
 * from its message row, an episode hit from its episode row, so over an empty store each answers
 * nothing anyway.
 */
function overHistory(deps: RecallDeps, req: RecallRequest): RecallDeps {
  const open = historyGate(req.userId, req.lists);
  const { messageSearch, episodes, exchangeVectors, episodeVectors, exchangeIndex } = deps;
  return {
    ...deps,
    messageSearch: gateMethods(messageSearch, open('messages'), { bm25: [], saidIn: [] }),
    episodes: gateMethods(episodes, open('episodes'), { search: { byWords: [], byDate: [] } }),
    ...(exchangeVectors ? { exchangeVectors: gateMethods(exchangeVectors, open('messages'), { query: [] }) } : {}),
    ...(exchangeIndex?.entityLines ? { exchangeIndex: gateMethods(exchangeIndex, open('messages'), { entityLines: [] }) } : {}),
    ...(episodeVectors ? { episodeVectors: gateMethods(episodeVectors, open('episodes'), { query: [] }) } : {}),
  };
}

type AsyncMethods<T> = { [K in keyof T]?: T[K] extends ((...args: never[]) => Promise<infer R>) | undefined ? R : never };

/** `target` with each method named in `empty` run only when `open` resolves true, else answering its empty value. */
function gateMethods<T extends object>(target: T, open: Promise<boolean>, empty: AsyncMethods<T>): T {
  const wrapped = Object.create(target) as T;
  for (const [name, nothing] of Object.entries(empty)) {
    const method = (target as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
    (wrapped as Record<string, unknown>)[name] = (...args: unknown[]) => gated(open, () => method.apply(target, args), nothing);
  }
  return wrapped;
}
