import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { claimStaleConversations } from '../../src/conversation/extraction-runs';
import type { SubjectKeys } from '../../src/security/subject';
import type { ServiceDeps } from '../../src/shared/deps';
import { indexExchanges, type ExchangeIndexDeps, type ExchangeIndexResult } from '../../src/conversation/exchange-index';

export type { ExchangeIndexResult } from '../../src/conversation/exchange-index';
import { reconcileReminders, type ReminderReconcileResult } from '../../src/proactive/reminder-reconciler';
import { ConversationWorkflows, extractWorkflowId, type ExtractMemoriesWorkflow } from '../../src/conversation/contract';
import { ConversationIdKey, userSearchAttributes } from '../../workflows/shared/search-attributes';
import { asActivity } from '../shared/as-activity';

export type { ReminderReconcileResult };

export interface ReconcileResult {
  /** Conversations found idle with messages after their watermark. */
  found: number;
  /** Extractions started, or joined when one was already running. */
  started: number;
  failed: number;
}

/**
 * The extraction reconciler's activity (workflows/lifecycle/reconcilers.ts). It needs a Temporal client: the
 * extraction is started the way the API starts one, with the user's search attributes, so its
 * payloads are encrypted under that user's key and a purge finds it.
 */
export function createReconcilerActivities(deps: Pick<ServiceDeps, 'extractionRuns' | 'reminders' | 'config'> & ExchangeIndexDeps, opts: { client: Client; taskQueue: string; subjects: SubjectKeys }) {
  return {
    /**
     * Starts ExtractMemories for conversations idle for CONVERSATION_IDLE_SECONDS with messages
     * after their watermark: messages whose idle timer never ran (Temporal was down when they were
     * stored) or arrived after an extraction read its pages. An extraction already running for
     * the conversation is joined (USE_EXISTING), never doubled.
     */
    async reconcileConversations(input: { limit: number; idleSeconds?: number }): Promise<ReconcileResult> {
      return asActivity(async () => {
        const stale = await claimStaleConversations(deps, { idleSeconds: input.idleSeconds ?? deps.config.extraction.idleSeconds, limit: input.limit });
        const result: ReconcileResult = { found: stale.length, started: 0, failed: 0 };
        for (const { userId, conversationId } of stale) {
          const conversationRef = opts.subjects.ref(userId, 'conversation', conversationId);
          try {
            await opts.client.workflow.start<ExtractMemoriesWorkflow>(ConversationWorkflows.extractMemories, {
              taskQueue: opts.taskQueue,
              workflowId: extractWorkflowId(userId, conversationRef),
              workflowIdConflictPolicy: 'USE_EXISTING',
              args: [{ userId, conversationId }],
              typedSearchAttributes: [...userSearchAttributes(userId), { key: ConversationIdKey, value: conversationRef }],
              staticSummary: `Extract memories of conversation ${conversationRef} (reconciler: messages after the watermark)`,
            });
            result.started++;
          } catch {
            // Stamped as reconciled: it comes back on a later tick, after the others.
            result.failed++;
          }
          Context.current().heartbeat(result);
        }
        return result;
      });
    },

    /** One exchange indexer tick (workflows/lifecycle/reconcilers.ts): see indexExchanges. */
    async indexExchanges(input: { limit: number; budgetMs: number }): Promise<ExchangeIndexResult> {
      return asActivity(() => indexExchanges(deps, { ...input, onProgress: (r) => Context.current().heartbeat(r) }));
    },

    /**
     * Starts the workflow of open reminders whose row was committed but whose workflow never ran
     * (the process died between the two), after `graceSeconds` (src/proactive/reminder-reconciler.ts).
     */
    async reconcileReminders(input: { limit: number; graceSeconds: number }): Promise<ReminderReconcileResult> {
      return asActivity(() =>
        reconcileReminders(
          { reminders: deps.reminders, temporal: opts.client, taskQueue: opts.taskQueue, config: deps.config },
          { limit: input.limit, graceSeconds: input.graceSeconds, onProgress: (r) => Context.current().heartbeat(r) },
        ),
      );
    },
  };
}
