import type { Client } from '@temporalio/client';
import { memoriesRecalledSignal, MemoryWorkflows, reinforcementWorkflowId, type MemoriesRecalledInput, type RecallReinforcementWorkflow } from './contract';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';
import { withTemporalDeadline } from '../shared/workflow-wait';

/**
 * Hands recalled memory ids to the user's reinforcement workflow (signal-with-start). Called after
 * the recall response is computed and never awaited by it: the chat path does not wait on Temporal.
 * Under a deadline all the same (TEMPORAL_CALL_TIMEOUT_MS): with Temporal hung, every recall would
 * otherwise leave one call open for good, and a process serving recalls would pile them up.
 */
export function signalRecalled(
  temporal: Client,
  taskQueue: string,
  userId: string,
  memoryIds: string[],
  at: Date,
  flushSeconds: number,
  onError: (err: unknown) => void,
  callTimeoutMs: number,
): void {
  withTemporalDeadline(temporal, callTimeoutMs, () =>
    temporal.workflow.signalWithStart<RecallReinforcementWorkflow, [MemoriesRecalledInput]>(MemoryWorkflows.recallReinforcement, {
      taskQueue,
      workflowId: reinforcementWorkflowId(userId),
      args: [{ userId, flushSeconds }],
      signal: memoriesRecalledSignal,
      signalArgs: [{ memoryIds, at: at.toISOString() }],
      typedSearchAttributes: userSearchAttributes(userId),
      staticSummary: `Recall reinforcement for ${userId} (batched every ${flushSeconds}s)`,
    }),
  ).catch(onError);
}
