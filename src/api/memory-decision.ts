import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { MemoryWorkflows, type MemoryDecisionAction, type MemoryDecisionOutcome, type MemoryDecisionWorkflow } from '../memory/contract';
import { waitForResult, withTemporalDeadline } from '../shared/workflow-wait';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';
import type { ApiDeps } from './deps';
import { workflowCallError } from './workflow-failures';

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

/** The 202 answer of a decision route: accepted, applied when a worker gets to it. */
export const pendingDecision = z.object({ workflowId: z.string(), pending: z.literal(true) });

/** The decision's outcome, or (`pending`) the workflow still taking it after WORKFLOW_WAIT_TIMEOUT_MS. */
export type MemoryDecisionRun = (MemoryDecisionOutcome & { workflowId: string; pending?: false }) | { pending: true; action: MemoryDecisionAction; workflowId: string };

/**
 * Runs one API decision about a memory as a MemoryDecision workflow (workflows/memory/decisions.ts) and
 * returns its outcome; a refusal comes back as the MemoryServiceError the service would have
 * thrown (same status, code, message and details as before the workflow existed).
 *
 * Bounded like a store: the start has TEMPORAL_CALL_TIMEOUT_MS (past it, 503
 * `workflowUnavailable`: Temporal took nothing), the wait WORKFLOW_WAIT_TIMEOUT_MS (past it, or
 * when Temporal stops answering during it, `pending`: the decision is durable and is applied when
 * a worker gets to it). So the run has no execution timeout of its own: one that expired after a
 * `pending` answer would leave undone what the caller was told would be done.
 */
export async function runMemoryDecision(
  deps: Pick<ApiDeps, 'temporal' | 'taskQueue'> & { config: { reliability: Pick<ApiDeps['config']['reliability'], 'workflowWaitMs' | 'temporalCallMs'> } },
  input: { userKey: string; memoryId: string; action: MemoryDecisionAction; now: Date; actor?: 'api' | 'page' },
): Promise<MemoryDecisionRun> {
  const workflowId = memoryDecisionWorkflowId(input.action, input.userKey, input.memoryId);
  let result;
  try {
    const handle = await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () =>
      deps.temporal.workflow.start<MemoryDecisionWorkflow>(MemoryWorkflows.decision, {
        taskQueue: deps.taskQueue,
        workflowId,
        args: [{ userKey: input.userKey, memoryId: input.memoryId, action: input.action, actor: input.actor ?? 'api', requestedAt: input.now.toISOString() }],
        typedSearchAttributes: userSearchAttributes(input.userKey),
        staticSummary: `${SUMMARY[input.action]} ${input.memoryId} (${input.actor === 'page' ? 'memory page' : 'API'} request)`,
      }),
    );
    const waited = await waitForResult(deps.temporal, () => handle.result(), deps.config.reliability.workflowWaitMs);
    if (!waited.done) return { pending: true, action: input.action, workflowId };
    result = waited.result;
  } catch (err) {
    throw workflowCallError(err, { workflowId, failed: `the ${input.action} decision failed`, unavailable: `Temporal unavailable: the ${input.action} decision was not taken` });
  }
  if (!result.applied || !result.outcome) {
    const refusal = result.refusal ?? { code: ErrorCode.internal, message: 'decision not applied' };
    const code = (KNOWN_CODES.has(refusal.code) ? refusal.code : ErrorCode.internal) as ErrorCode;
    throw new MemoryServiceError(code, refusal.message, refusal.details ?? {});
  }
  return { ...result.outcome, workflowId };
}
