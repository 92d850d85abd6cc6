import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { TimeoutFailure } from '@temporalio/common';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { MemoryWorkflows, type MemoryDecisionAction, type MemoryDecisionOutcome, type MemoryDecisionWorkflow } from '../memory/contract';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';
import type { ApiDeps } from './deps';
import { workflowCallError } from './workflow-failures';

/** How long a decision may take, worker pick-up included, before the API answers 503 (and the decision is not applied). */
const DECISION_TIMEOUT = '1m';

const SUMMARY: Record<MemoryDecisionAction, string> = {
  forget: 'Forget memory',
  restore: 'Restore memory',
  erase: 'Erase memory',
  confirm: 'Confirm memory',
};

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));

/** Workflow id of one decision request: action, user key, memory id and a request nonce (no text). */
export function memoryDecisionWorkflowId(action: MemoryDecisionAction, userKey: string, memoryId: string): string {
  return `${action}:${userKey}:${memoryId}:${randomBytes(6).toString('hex')}`;
}

/**
 * Runs one API decision about a memory as a MemoryDecision workflow (workflows/memory/decisions.ts) and
 * returns its outcome; a refusal comes back as the MemoryServiceError the service would have
 * thrown (same status, code, message and details as before the workflow existed).
 */
export async function runMemoryDecision(
  deps: Pick<ApiDeps, 'temporal' | 'taskQueue'>,
  input: { userKey: string; memoryId: string; action: MemoryDecisionAction; now: Date; actor?: 'api' | 'page' },
): Promise<MemoryDecisionOutcome & { workflowId: string }> {
  const workflowId = memoryDecisionWorkflowId(input.action, input.userKey, input.memoryId);
  let result;
  try {
    result = await deps.temporal.workflow.execute<MemoryDecisionWorkflow>(MemoryWorkflows.decision, {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [{ userKey: input.userKey, memoryId: input.memoryId, action: input.action, actor: input.actor ?? 'api', requestedAt: input.now.toISOString() }],
      typedSearchAttributes: userSearchAttributes(input.userKey),
      staticSummary: `${SUMMARY[input.action]} ${input.memoryId} (${input.actor === 'page' ? 'memory page' : 'API'} request)`,
      workflowExecutionTimeout: DECISION_TIMEOUT,
    });
  } catch (err) {
    const unavailable = `Temporal unavailable: the ${input.action} decision was not taken`;
    // Out of DECISION_TIMEOUT (no worker picked it up in time): not taken, as when Temporal is down.
    if (err instanceof WorkflowFailedError && err.cause instanceof TimeoutFailure) throw new MemoryServiceError(ErrorCode.workflowUnavailable, unavailable, { workflowId }, { cause: err });
    throw workflowCallError(err, { workflowId, failed: `the ${input.action} decision failed`, unavailable });
  }
  if (!result.applied || !result.outcome) {
    const refusal = result.refusal ?? { code: ErrorCode.internal, message: 'decision not applied' };
    const code = (KNOWN_CODES.has(refusal.code) ? refusal.code : ErrorCode.internal) as ErrorCode;
    throw new MemoryServiceError(code, refusal.message, refusal.details ?? {});
  }
  return { ...result.outcome, workflowId };
}
