import { ApplicationFailure, executeChild, isCancellation, ParentClosePolicy, proxyActivities, TemporalFailure, upsertSearchAttributes, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createCallerExtractionActivities } from '../../activities/conversation/callers';
import { MEMORY_CONTRACT_VERSION, type ExtractMemoriesInput, type ExtractMemoriesResult } from '../../src/client/temporal-contract';
import { extractWorkflowId } from './conversation';
import { extractMemoriesWorkflow } from './extract-memories';
import { ConversationIdKey, MemoryDecisionsKey, userSearchAttributes } from '../shared/search-attributes';
import type { ExtractionResult } from '../shared/types';

type Activities = ReturnType<typeof createCallerExtractionActivities>;

const options: ActivityOptions = { startToCloseTimeout: '1m', retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 20 } };
const acts = proxyActivities<Activities>(options);

/**
 * ExtractMemories — the workflow a caller starts (src/client/temporal-contract.ts): from a chat
 * service's client or as a child of its own workflow, with no HTTP call. It
 *   1. resolves (tenant, user) to the user key (an unknown tenant fails it, non-retryably) and
 *      labels itself with `MemoryUserId`, `MemoryTenant` and `ConversationId` for Temporal UI;
 *   2. stores the messages it was given, as the messages API does (idempotent per message id);
 *   3. runs the memory service's own extraction as a child — `extractMemoriesWorkflow` with the
 *      usual id `extract:<userKey>:<ref>`, one summarised activity per candidate, every payload
 *      encrypted with the user's key — and returns its decisions, with the reminders the
 *      conversation asked for (their workflow ids, for `snoozeSignal` / `dismissSignal`).
 * Its own payloads are the caller's input and the caller's answer, and stay in clear for the
 * caller's default data converter (workflows/shared/payload-subject.ts, CALLER_WORKFLOW_TYPES).
 */
export async function ExtractMemories(input: ExtractMemoriesInput): Promise<ExtractMemoriesResult> {
  try {
    return await extractForCaller(input);
  } catch (err) {
    throw forCaller(err);
  }
}

async function extractForCaller(input: ExtractMemoriesInput): Promise<ExtractMemoriesResult> {
  const caller = { tenantId: input.tenantId, userId: input.userId, conversationId: input.conversationId, contractVersion: input.contractVersion };
  const { userKey, conversationRef } = await acts.resolveCallerConversation.executeWithOptions({ ...options, summary: 'resolve the caller: tenant and user' }, [caller]);
  upsertSearchAttributes([...userSearchAttributes(userKey), { key: ConversationIdKey, value: conversationRef }]);

  const messages =
    input.messages && input.messages.length > 0
      ? await acts.storeCallerMessages.executeWithOptions({ ...options, summary: `store ${input.messages.length} messages of conversation ${conversationRef}` }, [
          { userKey, tenantId: input.tenantId, userId: input.userId, conversationId: input.conversationId, messages: input.messages },
        ])
      : { inserted: [], duplicates: [] };

  const { workflowId: extractionWorkflowId, result } = await extractAsChild(userKey, input.conversationId, conversationRef);
  const actions = [...new Set(result.decisions.map((d) => d.action))].sort();
  if (actions.length > 0) upsertSearchAttributes([{ key: MemoryDecisionsKey, value: actions }]);

  const reminders = await acts.conversationReminders.executeWithOptions({ ...options, heartbeatTimeout: '30s', summary: `reminders asked for in conversation ${conversationRef}` }, [
    { userKey, conversationId: input.conversationId },
  ]);
  return {
    contractVersion: MEMORY_CONTRACT_VERSION,
    userKey,
    conversationId: input.conversationId,
    messages,
    extractionWorkflowId,
    messagesProcessed: result.messagesProcessed,
    counts: result.counts,
    decisions: result.decisions,
    reminders,
  };
}

/**
 * The extraction under its usual id, so it joins the memory service's own bookkeeping; while an
 * extraction of the same conversation is still running (an idle timer fired, `POST …/end`), this
 * one runs under an id of its own — decisions are keyed per candidate, so both applying is safe.
 */
async function extractAsChild(userKey: string, conversationId: string, conversationRef: string): Promise<{ workflowId: string; result: ExtractionResult }> {
  const usual = extractWorkflowId(userKey, conversationRef);
  for (const workflowId of [usual, `${usual}:${workflowInfo().runId}`]) {
    try {
      const result = await executeChild(extractMemoriesWorkflow, {
        workflowId,
        args: [{ userId: userKey, conversationId }],
        typedSearchAttributes: [...userSearchAttributes(userKey), { key: ConversationIdKey, value: conversationRef }],
        staticSummary: `Extract memories of conversation ${conversationRef} (for ExtractMemories ${workflowInfo().workflowId})`,
        // Extraction is idempotent work worth finishing even if the caller gives up waiting.
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      return { workflowId, result };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError) || workflowId !== usual) throw err;
    }
  }
  throw ApplicationFailure.nonRetryable('unreachable: no extraction id left');
}

/**
 * A refusal as the caller can read it: the activity's or child's failure carries details encoded
 * for the memory service (encrypted); the caller gets the type and message only, in clear.
 */
function forCaller(err: unknown): unknown {
  if (!(err instanceof TemporalFailure) || isCancellation(err)) return err;
  let cause: unknown = err;
  while (cause instanceof TemporalFailure && !(cause instanceof ApplicationFailure) && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure) return ApplicationFailure.create({ type: cause.type ?? 'ExtractMemoriesFailed', message: cause.message, nonRetryable: true });
  return ApplicationFailure.create({ type: 'ExtractMemoriesFailed', message: err.message, nonRetryable: true });
}
