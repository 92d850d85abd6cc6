/**
 * Route planning: which memory routes a query runs, the episodic plan (the user's zone and the
 * dates the query names), and the one statement that reads the importance, type and instruction
 * lists for the routes that need them.
 */
import { IMPORTANCE_LEVEL_THRESHOLDS } from '../core/lifecycle/importance';
import type { MemoryLists } from '../core/recall/memory-lists';
import { planRoutes } from '../core/recall/query-intent';
import { ALL_ROUTES, type RecallRoute } from '../core/recall/routes';
import { withDeadline } from './deadline';
import { planEpisodic, resolveTimeZone, resolveTimeZoneWithoutStore, type EpisodicPlan } from './episodic-recall';
import { tokenizeForIndex } from '../shared/segmentation';
import { CANDIDATES_PER_ROUTE, IMPORTANT_K, RECENT_K, TYPE_K, type RecallDeps, type RecallOptions, type RecallRequest } from './recall-request';
import type { RouteFailure } from './route-runner';

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

/**
 * The episodic plan (what was said when, not only what was distilled), read while the memory routes run: the user's zone (a failed
 * lookup is reported as the time route's and the request's zone or UTC stands in) and the dates
 * the query names. Undefined when both episodic routes are off: recall is then what it was.
 */
export async function planEpisodicRoutes(deps: RecallDeps, req: RecallRequest, failures: RouteFailure[]): Promise<EpisodicPlan | undefined> {
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
 * One statement for the importance, type and recent routes and the standing instructions (one
 * round trip instead of four). If it fails, each of them fails as it would have alone: the routes
 * are reported failed, the instructions as the hydrate step's; ANN, BM25 and the rest still answer.
 */
export function startMemoryLists(deps: RecallDeps, req: RecallRequest, planned: readonly RecallRoute[]): Promise<MemoryLists> | undefined {
  const source = req.reads ?? deps.recallLists;
  if (!source) return undefined;
  const prefix = wantsStablePrefix(deps, req);
  // BM25 restricted to types scores every posting (another statement): it keeps the retriever.
  if (planned.includes('bm25') && !req.types) {
    req.bm25 = source.bm25WithMemories({ userId: req.userId, now: req.now, tokens: tokenizeForIndex(bm25Text(req)), k: CANDIDATES_PER_ROUTE });
    req.bm25.catch(() => {});
    req.hydration?.track(req.bm25.then((r) => ({ ids: r.hits.map((h) => h.id), memories: r.memories })));
  }
  const lists = source.memoryLists({
    userId: req.userId,
    now: req.now,
    ...(planned.includes('important') ? { important: { k: IMPORTANT_K, minImportance: IMPORTANCE_LEVEL_THRESHOLDS.high, ...(req.types ? { types: req.types } : {}) } } : {}),
    ...(planned.includes('type') ? { byTypes: { types: req.types ?? planRoutes(req.query).types, k: TYPE_K } } : {}),
    ...(planned.includes('recent') ? { recent: { k: RECENT_K, ...(req.types ? { types: req.types } : {}) } } : {}),
    instructions: { k: TYPE_K },
    persona: prefix.persona,
    scenes: prefix.scenes,
    // Which stores hold anything: the routes over an empty one need not run (history-gate.ts).
    history: true,
  });
  lists.catch(() => {});
  req.hydration?.track(lists.then((l) => ({ ids: [], memories: l.memories })));
  return lists;
}

/** The chat lines memory BM25 reads beside the query: the last two, since a follow-up rarely repeats its subject. */
export function bm25ChatContext(req: Pick<RecallRequest, 'options'>): string[] {
  return (req.options.recentMessages ?? []).slice(-2);
}

/** The text memory BM25 searches: the query and its chat context. */
export function bm25Text(req: Pick<RecallRequest, 'query' | 'options'>): string {
  return [req.query, ...bm25ChatContext(req)].join(' ');
}

/** Whether a recall reads the persona and the scene block: only for a full context (a request that restricts the routes gets neither). */
export function wantsStablePrefix(deps: Pick<RecallDeps, 'personas' | 'scenes' | 'config'>, req: Pick<RecallRequest, 'options'>): { persona: boolean; scenes: boolean } {
  const full = !req.options.routes;
  return { persona: full && deps.personas !== undefined, scenes: full && deps.scenes !== undefined && deps.config.recall.scenesShare > 0 };
}
