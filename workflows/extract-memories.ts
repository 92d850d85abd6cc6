import { log, patched, proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { AppliedDecision } from '../src/core/dto';
import { startReminderChild } from './reminder-child';
import { MemoryDecisionsKey } from './search-attributes';
import type { ExtractionResult, ExtractMemoriesInput } from './types';

type Activities = ReturnType<typeof createActivities>;

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 20 };
// Short timeouts: a decision is one transaction, so a crashed worker's attempt is retried quickly.
const acts = proxyActivities<Activities>({ startToCloseTimeout: '15s', retry });
// Extraction may call an LLM; its own retries with the validation error happen inside the activity.
const extractor = proxyActivities<Activities>({ startToCloseTimeout: '5m', heartbeatTimeout: '20s', retry });

const PAGE = 200;

/**
 * ExtractMemories: reads the conversation page by page, extracts candidates, and takes one
 * audited decision per candidate (in message order, so "I'm allergic" then "I'm not any more" in
 * one conversation ends superseded). Decisions are keyed per candidate: re-running the workflow or
 * retrying an activity never applies a decision twice.
 */
export async function extractMemoriesWorkflow(input: ExtractMemoriesInput): Promise<ExtractionResult> {
  const decisions: AppliedDecision[] = [];
  let afterSeq = 0;
  let messagesProcessed = 0;
  for (;;) {
    const page = await extractor.extractCandidates({ ...input, afterSeq, limit: PAGE });
    messagesProcessed += page.messageCount;
    for (const item of page.candidates) {
      const decision = await acts.decideAndApply.executeWithOptions(
        { startToCloseTimeout: '15s', retry, summary: `decide ${item.candidate.type} from ${item.candidate.messageIds.join(',')}` },
        [{ userId: input.userId, conversationId: input.conversationId, candidate: item.candidate, key: item.key }],
      );
      decisions.push(decision);
    }
    // A reminder asked for in conversation ("提醒我…") is honoured like one set through the API:
    // one ReminderWorkflow each, idempotent (deterministic id + REJECT_DUPLICATE), and it outlives
    // this workflow (ABANDON).
    for (const request of page.reminders ?? []) await startReminderChild(request);
    if (page.nextSeq === null) break;
    afterSeq = page.nextSeq;
  }
  const actions = [...new Set(decisions.map((d) => d.action))].sort();
  if (actions.length > 0) upsertSearchAttributes([{ key: MemoryDecisionsKey, value: actions }]);
  await acts.reconcileVectors({ userId: input.userId });
  // Episodes keep what was talked about that extraction did not keep: one per conversation-day,
  // after the decisions so a forget request of this conversation is already applied. Idempotent
  // (deterministic ids, upsert).
  if (patched('write-episodes')) {
    await acts.writeEpisodes.executeWithOptions(
      { startToCloseTimeout: '2m', retry, summary: `episodes of conversation ${input.conversationId}` },
      [{ userId: input.userId, conversationId: input.conversationId }],
    );
  }
  await acts.markConversationExtracted({ userId: input.userId, conversationId: input.conversationId, workflowId: workflowInfo().workflowId });

  const counts = { ignore: 0, create: 0, reinforce: 0, update: 0, supersede: 0, forget: 0 } as ExtractionResult['counts'];
  for (const d of decisions) counts[d.action]++;
  log.info('extraction finished', { counts, messagesProcessed });
  return { userId: input.userId, conversationId: input.conversationId, messagesProcessed, decisions, counts };
}
