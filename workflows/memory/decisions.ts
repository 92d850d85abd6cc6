import { ActivityFailure, ApplicationFailure, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { createDecisionActivities } from '../../activities/memory/decisions';
import { MemoryDecisionsKey } from '../shared/search-attributes';

type Activities = ReturnType<typeof createDecisionActivities>;

/** A decision the API takes about one memory on request: forget (soft delete), restore, erase (hard delete), confirm (a pending memory becomes the user's). */
export type MemoryDecisionAction = 'forget' | 'restore' | 'erase' | 'confirm';

export interface MemoryDecisionInput {
  /** The user key (`MemoryUserId`). */
  userKey: string;
  memoryId: string;
  action: MemoryDecisionAction;
  /** Who asked: `api` for the HTTP API, `page` for the memory page (the audit event's actor). */
  actor: string;
  /** When it was asked (ISO): the decision's time in the audit trail. */
  requestedAt: string;
}

export type MemoryDecisionOutcome =
  | { action: 'forget'; memoryId: string; changed: boolean; vectorRemoved: boolean }
  | { action: 'restore'; memoryId: string; vectorSynced: boolean }
  | { action: 'erase'; memoryId: string; removed: Record<string, number>; vectorRemoved: boolean; conversations: string[]; episodesRebuilt: boolean }
  | { action: 'confirm'; memoryId: string; changed: boolean };

/** The workflow's result: the decision applied, or the refusal (unknown memory, wrong status) with the API's error code. */
export interface MemoryDecisionResult {
  action: MemoryDecisionAction;
  memoryId: string;
  applied: boolean;
  outcome?: MemoryDecisionOutcome;
  refusal?: { code: string; message: string; details?: Record<string, unknown> };
}

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
