import { proxyActivities } from '@temporalio/workflow';
import type { DrainSummary } from '../../activities/conversation/extraction-runs';
import type { ExchangeIndexResult, ReconcileResult } from '../../activities/conversation/reconcilers';

// Activity signatures only (type imports): the workflow bundle never loads activity code.
interface ConversationReconcilerActivities {
  reconcileConversations(input: { limit: number; idleSeconds?: number }): Promise<ReconcileResult>;
  drainVectorOutbox(input: { userId?: string; budgetMs?: number }): Promise<DrainSummary>;
  indexExchanges(input: { limit: number; budgetMs: number; userTokens?: number }): Promise<ExchangeIndexResult>;
}

// The schedules run these every minute or two; a failed tick is simply the next tick's work.
// (The same options as the reminder reconciler's: all of them shared one proxy before the move.)
const { reconcileConversations, drainVectorOutbox, indexExchanges } = proxyActivities<ConversationReconcilerActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '1m',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
});

export interface ExtractionReconcilerInput {
  /** Conversations per tick (default 100); the rest wait for the next tick, oldest first. */
  limit?: number;
  /** Idle time before a conversation is reconciled (default CONVERSATION_IDLE_SECONDS). */
  idleSeconds?: number;
}

/**
 * Extraction reconciler (Schedule `reconcile:extractions:<taskQueue>`): conversations idle for the
 * idle time with messages after their watermark get an ExtractMemories run. A Temporal outage
 * while messages were stored only delays their extraction to the first tick after recovery.
 */
export async function extractionReconcilerWorkflow(input: ExtractionReconcilerInput = {}): Promise<ReconcileResult> {
  return reconcileConversations({ limit: input.limit ?? 100, ...(input.idleSeconds === undefined ? {} : { idleSeconds: input.idleSeconds }) });
}

/**
 * Vector outbox drain (Schedule `drain:vector-outbox:<taskQueue>`): writes due entries to Chroma,
 * backing failed ones off and dead-lettering those that keep failing (docs/reliability.md). Here
 * because its activity is the extraction run's own drain (activities/conversation/extraction-runs.ts).
 */
export async function vectorOutboxWorkflow(input: { budgetMs?: number } = {}): Promise<DrainSummary> {
  return drainVectorOutbox({ ...(input.budgetMs === undefined ? {} : { budgetMs: input.budgetMs }) });
}

/**
 * Exchange indexer (Schedule `index:exchanges:<taskQueue>`): embeds the exchanges of conversations
 * with messages past their exchange watermark (new ones, and every older one once: the backfill),
 * in bounded chunks taken round-robin over users, at most `userTokens` estimated tokens per user
 * per tick. Chroma down: the watermark stays, the next tick does the work.
 */
export async function exchangeIndexWorkflow(input: { limit?: number; budgetMs?: number; userTokens?: number } = {}): Promise<ExchangeIndexResult> {
  // Spread only when given: the Schedule's ticks keep the activity input their histories recorded.
  return indexExchanges({ limit: input.limit ?? 200, budgetMs: input.budgetMs ?? 90_000, ...(input.userTokens === undefined ? {} : { userTokens: input.userTokens }) });
}
