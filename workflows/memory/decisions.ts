import { ActivityFailure, ApplicationFailure, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { createDecisionActivities } from '../../activities/memory/decisions';
import { MemoryDecisionsKey } from '../shared/search-attributes';
import type { MemoryDecisionAction, MemoryDecisionInput, MemoryDecisionOutcome, MemoryDecisionResult } from '../../src/memory/contract';

type Activities = ReturnType<typeof createDecisionActivities>;

export type { MemoryDecisionAction, MemoryDecisionInput, MemoryDecisionOutcome, MemoryDecisionResult };

const { applyMemoryDecision } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 5 },
});

/**
 * MemoryDecision: one decision the API takes about one memory — forget, restore or erase —
 * as a short workflow, so every decision is in Temporal UI: found by `MemoryUserId` (and
 * `MemoryDecisions`, set once the decision is applied), with a static summary naming the action
 * and the memory id only, and the decision as the result. The activity is the same service call
 * the API made directly before; a refusal (404, 409) is a result too, not a failed workflow.
 */
export async function MemoryDecision(input: MemoryDecisionInput): Promise<MemoryDecisionResult> {
  const base = { action: input.action, memoryId: input.memoryId };
  try {
    const outcome = await applyMemoryDecision.executeWithOptions(
      { startToCloseTimeout: '30s', retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '5s', maximumAttempts: 5 }, summary: `${input.action} memory ${input.memoryId}` },
      [input],
    );
    upsertSearchAttributes([{ key: MemoryDecisionsKey, value: [input.action] }]);
    return { ...base, applied: true, outcome };
  } catch (err) {
    const refusal = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable ? err.cause : undefined;
    if (!refusal) throw err;
    const details = refusal.details?.[0];
    return {
      ...base,
      applied: false,
      refusal: { code: refusal.type ?? 'internal_error', message: refusal.message, ...(details && typeof details === 'object' ? { details: details as Record<string, unknown> } : {}) },
    };
  }
}
