import type { Client } from '@temporalio/client';
import { memoriesRecalledSignal, MemoryWorkflows, reinforcementWorkflowId, type MemoriesRecalledInput, type RecallReinforcementWorkflow } from './contract';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';

/**
 * Hands recalled memory ids to the user's reinforcement workflow (signal-with-start). Called after
 * the recall response is computed and never awaited by it: the chat path does not wait on Temporal.
 */
export function signalRecalled(temporal: Client, taskQueue: string, userId: string, memoryIds: string[], at: Date, flushSeconds: number, onError: (err: unknown) => void): void {
  temporal.workflow
    .signalWithStart<RecallReinforcementWorkflow, [MemoriesRecalledInput]>(MemoryWorkflows.recallReinforcement, {
      taskQueue,
      workflowId: reinforcementWorkflowId(userId),
      args: [{ userId, flushSeconds }],
      signal: memoriesRecalledSignal,
      signalArgs: [{ memoryIds, at: at.toISOString() }],
      typedSearchAttributes: userSearchAttributes(userId),
      staticSummary: `Recall reinforcement for ${userId} (batched every ${flushSeconds}s)`,
    })
    .catch(onError);
}
