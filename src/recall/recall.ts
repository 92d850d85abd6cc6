/**
 * Recall, stage by stage: route planning (route-plan.ts), the routes run in parallel
 * (memory-routes.ts, rewrite-search.ts, follow-up-route.ts, stable-prefix.ts), fusion (fusion.ts),
 * memories and exchanges on one score (joint-injection.ts), and the budget cut and response
 * (recall-result.ts). The request, options and result shapes are in recall-request.ts; this file
 * only orders the stages, and re-exports what callers of recall import.
 */
import { metrics } from '../observability/metrics';
import { COMPACT_BELOW_TOKENS } from '../core/recall/format';
import { isFillerExchange, withoutFiller } from '../core/recall/filler';
import type { RouteRanking } from '../core/recall/rrf';
import type { RecallRoute } from '../core/recall/routes';
import { startFollowUp } from './follow-up-route';
import { fuseAndHydrate, rankFused, startInstructions } from './fusion';
import { Hydration } from './hydration';
import { jointInjection } from './joint-injection';
import { dateAndGraphRoutes, memoryRouteTask, settleExchanges, startExchangeSearch } from './memory-routes';
import { recallRequest, type RecallDeps, type RecallOptions, type RecallResult } from './recall-request';
import { buildRecallResult } from './recall-result';
import { startRewriteSearch } from './rewrite-search';
import { planEpisodicRoutes, planMemoryRoutes, startMemoryLists } from './route-plan';
import { settleRoutes, startRoute, type RouteFailure, type StartedRoute } from './route-runner';
import { settleStablePrefix, startStablePrefix } from './stable-prefix';

export { ALL_ROUTES, RecallRoute } from '../core/recall/routes';
export type { AfterRecall, RecallDeps, RecallOptions, RecallResult, RecalledMemory } from './recall-request';
export { planMemoryRoutes } from './route-plan';
export { rankFused } from './fusion';
export { buildRecallResult } from './recall-result';

/** The episodic routes (dates and past exchanges); without them recall reads memories only, unchanged. */
export const EPISODIC_ROUTES: readonly RecallRoute[] = ['time', 'exchanges'];

/**
 * Hybrid recall for one chat message: ANN (vector index) ∥ BM25 (PostgreSQL postings,
 * jieba-segmented) ∥ recency/importance ∥ type ∥ time routes, fused with RRF, ranked by decay ×
 * importance × type priority, cut to the token budget and formatted for the prompt. Never throws
 * for a dependency failure: the failed routes are named in `error` and the others still contribute.
 */
export async function recall(deps: RecallDeps, userId: string, message: string, options: RecallOptions = {}): Promise<RecallResult> {
  const startedAt = Date.now();
  const req = recallRequest(deps, userId, message, options);
  const planned = planMemoryRoutes(req.query, options);
  const ann = planned.includes('ann') ? startRoute(memoryRouteTask(deps, req, 'ann'), req.deadline) : undefined;
  // A held user's recall gives the ANN route the rest of this turn of the event loop: with the
  // query's vector at hand its request reaches Chroma before the rest of the start (the held set's
  // one statement, segmentation, date parsing: about a millisecond of CPU) runs, which then
  // overlaps Chroma's work instead of delaying its start (docs/benchmarks.md, "The ANN request
  // first"). Read through SQL, the statements are on the critical path too and leave at once.
  if (ann && deps.workingSets?.isHeld(userId)) await new Promise((resolve) => setImmediate(resolve));
  // Started first: a held working set's one statement then runs beside the Chroma query.
  if (deps.workingSets && deps.recallLists) req.reads = deps.workingSets.forRequest(userId, req.now, { lists: deps.recallLists, memories: deps.memories });
  req.hydration = new Hydration(req.reads ?? deps.memories, userId, req.now);
  const failures: RouteFailure[] = [];
  req.lists = startMemoryLists(deps, req, planned);
  const running: StartedRoute<RecallRoute, string[]>[] = planned.map((route) => (route === 'ann' ? ann! : startRoute(memoryRouteTask(deps, req, route), req.deadline)));
  const instructions = startInstructions(deps, req);
  const stablePrefix = startStablePrefix(deps, req);
  const rewrite = startRewriteSearch(deps, req, failures);

  const episodic = await planEpisodicRoutes(deps, req, failures);
  const ranges = episodic?.ranges ?? [];
  running.push(...dateAndGraphRoutes(deps, req, ranges).map((task) => startRoute(task, req.deadline)));
  const exchangeSearch = startExchangeSearch(deps, req, episodic);
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
  const prefix = await settleStablePrefix(stablePrefix, report, failures);
  const result = buildRecallResult({
    persona: prefix.persona,
    personaShare: deps.config.recall.personaShare,
    scenes: prefix.scenes,
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
