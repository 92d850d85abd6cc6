import type { Client } from '@temporalio/client';
import { RECALL_NUDGE_MAX_IDS } from '../core/proactive/recall-nudge';
import { ProactiveWorkflows, recallHitsSignal, recallNudgeWorkflowId, type RecallHitsInput, type RecallNudgeWorkflow } from './contract';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';
import { withTemporalDeadline } from '../shared/workflow-wait';

/**
 * Hands a recall's memory ids to the user's recall-nudge workflow (signal-with-start). Called
 * after the recall response is computed and never awaited by it: the chat path does not wait on
 * Temporal, and which of the ids are open goals or pain points is looked up off the hot path.
 * Under a deadline all the same (TEMPORAL_CALL_TIMEOUT_MS): with Temporal hung, every recall would otherwise leave a call
 * open for good, and a process serving recalls would pile them up.
 */
export function signalRecallHits(
  temporal: Client,
  taskQueue: string,
  userId: string,
  memoryIds: string[],
  at: Date,
  onError: (err: unknown) => void,
  callTimeoutMs: number,
): void {
  if (memoryIds.length === 0) return;
  withTemporalDeadline(temporal, callTimeoutMs, () =>
    temporal.workflow.signalWithStart<RecallNudgeWorkflow, [RecallHitsInput]>(ProactiveWorkflows.recallNudge, {
      taskQueue,
      workflowId: recallNudgeWorkflowId(userId),
      args: [{ userId }],
      signal: recallHitsSignal,
      signalArgs: [{ memoryIds: memoryIds.slice(0, RECALL_NUDGE_MAX_IDS), at: at.toISOString() }],
      typedSearchAttributes: userSearchAttributes(userId),
      staticSummary: `Recall nudges for ${userId}`,
    }),
  ).catch(onError);
}
