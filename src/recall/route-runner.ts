/**
 * Parallel search routes with failure folding, shared by recall (memory routes) and conversation
 * search (exchange routes): each route runs against the request's deadline, a failed or late route
 * is reported and the others still answer, and the failures fold into one structured error.
 */
import type { ErrorCode } from '../core/errors';
import { errorCodeOf, withDeadline } from './deadline';
import { metrics } from '../observability/metrics';
import { inSpan } from '../observability/tracing';

/** One route to run: its name and the search. */
export interface RouteTask<R extends string, T> {
  route: R;
  run: () => Promise<T>;
}

/** A route that threw or missed the deadline. */
export interface RouteFailure {
  route: string;
  err: unknown;
}

/** One line of the per-request route report. */
export interface RouteReport<R extends string> {
  route: R;
  ok: boolean;
  ms: number;
  hits: number;
}

/** The error a response carries when routes failed: the first failure's code, every failure named. */
export interface FoldedRouteError {
  code: ErrorCode;
  message: string;
  routes: string[];
}

/** A route already running; settle it (with the others) with {@link settleRoutes}. */
export interface StartedRoute<R extends string, T> {
  route: R;
  outcome: Promise<{ value: T; ms: number }>;
}

/** What the routes answered (in task order), the report of every route, and the failures. */
export interface SettledRoutes<R extends string, T> {
  results: { route: R; value: T }[];
  report: RouteReport<R>[];
  failures: RouteFailure[];
}

/** Starts a route now, bounded by `deadline` (epoch ms) and timed. */
export function startRoute<R extends string, T>(task: RouteTask<R, T>, deadline: number): StartedRoute<R, T> {
  const t0 = Date.now();
  let running: Promise<T>;
  try {
    // One span per route, under the request's span when tracing is on (src/observability/tracing.ts).
    running = inSpan(`recall.route ${task.route}`, { 'recall.route': task.route }, () => task.run());
  } catch (err) {
    running = Promise.reject(err);
  }
  const outcome = withDeadline(running, deadline).then(
    (value) => {
      metrics.recallRoute(task.route, Date.now() - t0, true);
      return { value, ms: Date.now() - t0 };
    },
    (err: unknown) => {
      metrics.recallRoute(task.route, Date.now() - t0, false);
      throw err;
    },
  );
  // Observed at once: a route failing while the caller awaits something else must not count as an
  // unhandled rejection; settleRoutes still sees the failure.
  outcome.catch(() => {});
  return { route: task.route, outcome };
}

/**
 * Waits for started routes. A failed route is reported with `ok: false` and the time since
 * `since` (the request's start), and its error is listed in `failures`; it never throws.
 */
export async function settleRoutes<R extends string, T>(
  started: readonly StartedRoute<R, T>[],
  opts: { since: number; hits: (value: T) => number },
): Promise<SettledRoutes<R, T>> {
  const settled = await Promise.allSettled(started.map((s) => s.outcome));
  const out: SettledRoutes<R, T> = { results: [], report: [], failures: [] };
  settled.forEach((s, i) => {
    const route = started[i]!.route;
    if (s.status === 'fulfilled') {
      out.results.push({ route, value: s.value.value });
      out.report.push({ route, ok: true, ms: s.value.ms, hits: opts.hits(s.value.value) });
    } else {
      out.failures.push({ route, err: s.reason });
      out.report.push({ route, ok: false, ms: Date.now() - opts.since, hits: 0 });
    }
  });
  return out;
}

/** Starts every task at once and settles them ({@link startRoute}, {@link settleRoutes}). */
export function runRoutes<R extends string, T>(tasks: readonly RouteTask<R, T>[], opts: { deadline: number; hits: (value: T) => number }): Promise<SettledRoutes<R, T>> {
  const since = Date.now();
  return settleRoutes(
    tasks.map((t) => startRoute(t, opts.deadline)),
    { since, hits: opts.hits },
  );
}

/** Folds route failures into the response's error; undefined when every route answered. */
export function foldRouteFailures(failures: readonly RouteFailure[]): FoldedRouteError | undefined {
  const first = failures[0];
  if (!first) return undefined;
  return {
    code: errorCodeOf(first.err),
    message: failures.map((f) => `${f.route}: ${f.err instanceof Error ? f.err.message : String(f.err)}`).join('; '),
    routes: failures.map((f) => f.route),
  };
}
