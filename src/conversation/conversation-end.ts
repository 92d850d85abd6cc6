import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { AppConfig } from '../config';
import type { SubjectKeys } from '../security/subject';
import type { ServiceDeps } from '../shared/deps';
import { withTemporalDeadline } from '../shared/workflow-wait';
import { ConversationWorkflows, conversationEndedSignal, conversationWorkflowId, extractWorkflowId, type ExtractMemoriesWorkflow } from './contract';
import { ConversationIdKey, userSearchAttributes } from '../../workflows/shared/search-attributes';

export interface ConversationEndDeps extends Pick<ServiceDeps, 'extractionRuns'> {
  temporal: Client;
  taskQueue: string;
  subjects: SubjectKeys;
  config: { reliability: Pick<AppConfig['reliability'], 'temporalCallMs'> };
}

export type ConversationEndResult =
  | { pending: false; workflowId: string; handle: WorkflowHandle<ExtractMemoriesWorkflow> & { firstExecutionRunId: string } }
  /**
   * Temporal did not answer within TEMPORAL_CALL_TIMEOUT_MS: the end request is recorded on the
   * conversation, and the extraction reconciler starts the extraction on its first tick after
   * recovery, without waiting for the idle time (docs/reliability.md).
   */
  | { pending: true; workflowId: string };

/**
 * Ends a conversation: stops its idle timer and starts (or joins) its ExtractMemories run. When
 * Temporal is unreachable the request is stored instead, so the caller can answer 202 `pending`
 * like POST …/messages does, and nothing waits for a retry that may never come.
 */
export async function endConversation(deps: ConversationEndDeps, input: { userKey: string; conversationId: string }): Promise<ConversationEndResult> {
  const { userKey, conversationId } = input;
  const conversationRef = deps.subjects.ref(userKey, 'conversation', conversationId);
  const workflowId = extractWorkflowId(userKey, conversationRef);
  try {
    const handle = await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, async () => {
      try {
        await deps.temporal.workflow.getHandle(conversationWorkflowId(userKey, conversationRef)).signal(conversationEndedSignal);
      } catch (err) {
        // No open idle timer (already fired or never armed) is fine: the extraction below is what counts.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      return deps.temporal.workflow.start<ExtractMemoriesWorkflow>(ConversationWorkflows.extractMemories, {
        taskQueue: deps.taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ userId: userKey, conversationId }],
        typedSearchAttributes: [...userSearchAttributes(userKey), { key: ConversationIdKey, value: conversationRef }],
        staticSummary: `Extract memories of conversation ${conversationRef} (ended by call)`,
      });
    });
    return { pending: false, workflowId, handle };
  } catch {
    // The messages are after the watermark; the stored request makes the reconciler take them
    // without waiting for the idle time. A PostgreSQL failure here propagates (503 by its code).
    await deps.extractionRuns.requestEnd({ userId: userKey, conversationId });
    return { pending: true, workflowId };
  }
}
