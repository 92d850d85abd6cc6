/**
 * The optional LLM query rewrite and the ANN and BM25 searches of the queries it proposes, run
 * beside the ordinary routes.
 */
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { RouteRanking } from '../core/recall/rrf';
import { shouldRewrite } from '../core/recall/query-rewrite';
import { withDeadline } from './deadline';
import { annHits, bm25Ids } from './memory-routes';
import type { RecallDeps, RecallRequest } from './recall-request';
import type { RouteFailure } from './route-runner';

export interface RewriteOutcome {
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
export function startRewriteSearch(deps: RecallDeps, req: RecallRequest, failures: RouteFailure[]): Promise<RewriteOutcome> | undefined {
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
