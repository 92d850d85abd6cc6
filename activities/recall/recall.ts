import { Context } from '@temporalio/activity';
import { recallOptionsOf, recallResponseOf } from '../../src/api/recall-contract';
import { recallBody } from '../../src/api/schemas';
import type { RecallActivityInput, RecallActivityResult } from '../../src/client/temporal-contract';
import { recall, type AfterRecall } from '../../src/recall/recall';
import type { ServiceDeps } from '../../src/shared/deps';
import { callerUserKey, parseInput, type CallerDeps } from '../conversation/callers';
import { withTypedFailures } from '../shared/failures';

/** Time the activity keeps for itself within its start-to-close timeout: encoding and the answer's trip. */
const ANSWER_MARGIN_MS = 300;
const MIN_RECALL_MS = 200;

export interface RecallActivityDeps extends CallerDeps {
  /** The API's after-recall hook (recall reinforcement); the activity counts as a recall like the route. */
  afterRecall?: AfterRecall;
}

/**
 * The `recall` activity of the Temporal contract (src/client/temporal-contract.ts), scheduled on
 * the memory task queue by a caller's workflow: the same validation, service call and response
 * as `POST /v1/users/{userId}/recall`, for (tenant, user) instead of an API key. A refusal is a
 * non-retryable ApplicationFailure typed with the HTTP API's error code; a degraded recall is a
 * result with `error`, as over HTTP. Recall's own deadline is cut to fit the caller's
 * start-to-close timeout, so a slow route degrades the answer instead of timing the activity out.
 * Its result crosses to the caller in clear (workflows/shared/payload-subject.ts, CALLER_ACTIVITY_TYPES).
 */
export function createRecallActivities(deps: ServiceDeps, callers: RecallActivityDeps) {
  return withTypedFailures({
    async recall(input: RecallActivityInput): Promise<RecallActivityResult> {
      const userKey = callerUserKey(callers, input);
      const { tenantId: _tenant, userId: _user, contractVersion: _version, ...request } = input;
      const body = parseInput(recallBody, request);
      const info = Context.current().info;
      const allowed = info.startToCloseTimeoutMs > 0 ? Math.max(MIN_RECALL_MS, info.startToCloseTimeoutMs - ANSWER_MARGIN_MS) : deps.config.recall.timeoutMs;
      const options = { ...recallOptionsOf(body), timeoutMs: Math.min(deps.config.recall.timeoutMs, allowed) };
      const result = await recall(deps, userKey, body.query, options);
      if (result.memories.length > 0) callers.afterRecall?.(userKey, result.memories, options.now ?? new Date());
      return recallResponseOf(result) as RecallActivityResult;
    },
  });
}
