/**
 * Vague follow-ups ("还是不行", "it's happening again"): read as being about the user's latest open
 * pain point, fetched beside the routes with the last exchange about it.
 */
import { latestOpenPainPoint } from '../core/recall/follow-up';
import type { RankedExchange } from '../core/recall/exchanges';
import type { Memory } from '../core/types';
import { tokenizeForIndex } from '../shared/segmentation';
import { withDeadline } from './deadline';
import { lastExchangeAbout } from './episodic-recall';
import { isVagueFollowUp } from './follow-up-net';
import type { RecallDeps, RecallRequest, RecallResult } from './recall-request';
import type { RouteFailure } from './route-runner';

/** What a vague follow-up was taken to mean: the latest open pain point and its last exchange. */
export interface FollowUpOutcome {
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
export function startFollowUp(deps: RecallDeps, req: RecallRequest, report: RecallResult['routes'], failures: RouteFailure[]): Promise<FollowUpOutcome | undefined> | undefined {
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
