import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { claimStaleConversations } from '../../src/conversation/extraction-runs';
import type { SubjectKeys } from '../../src/security/subject';
import type { ServiceDeps } from '../../src/shared/deps';
import { indexExchanges, type ExchangeIndexDeps, type ExchangeIndexResult } from '../../src/conversation/exchange-index';
import { ConversationWorkflows, extractWorkflowId, type ExtractMemoriesWorkflow } from '../../src/conversation/contract';
import { ConversationIdKey, userSearchAttributes } from '../../workflows/shared/search-attributes';
import { asActivity } from '../shared/as-activity';

export type { ExchangeIndexResult } from '../../src/conversation/exchange-index';

export interface ReconcileResult {
  /** Conversations found idle with messages after their watermark. */
  found: number;
  /** Extractions started, or joined when one was already running. */
  started: number;
  failed: number;
}

/**
 * The conversation's reconciler activities (workflows/conversation/reconcilers.ts): each repairs
 * the conversation's own state — extractions that never ran, exchanges not yet indexed. The
 * extraction reconciler needs a Temporal client: the extraction is started the way the API starts
 * one, with the user's search attributes, so its payloads are encrypted under that user's key and
 * a purge finds it.
 */
export function createConversationReconcilerActivities(deps: Pick<ServiceDeps, 'extractionRuns' | 'config'> & ExchangeIndexDeps, opts: { client: Client; taskQueue: string; subjects: SubjectKeys }) {
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

    /** One exchange indexer tick (workflows/conversation/reconcilers.ts): see indexExchanges. It heartbeats after every chunk. */
    async indexExchanges(input: { limit: number; budgetMs: number; userTokens?: number }): Promise<ExchangeIndexResult> {
      return asActivity(() => indexExchanges(deps, { ...input, onProgress: (r) => Context.current().heartbeat(r) }));
    },
  };
}
