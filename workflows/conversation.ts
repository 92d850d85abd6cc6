import {
  condition,
  continueAsNew,
  defineSignal,
  executeChild,
  setHandler,
  workflowInfo,
  ParentClosePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { extractMemoriesWorkflow } from './extract-memories';
import { ConversationIdKey, userSearchAttributes } from './search-attributes';
import type { ConversationInput, ConversationOutcome, MessagesAddedInput } from './types';

export const messagesAddedSignal = defineSignal<[MessagesAddedInput]>('messagesAddedSignal');
export const conversationEndedSignal = defineSignal<[]>('conversationEndedSignal');

/**
 * `conversationRef` is a keyed reference to the client's conversation id (which may carry personal
 * words); the user key is already a pseudonym. No part contains ":", so no two (tenant, user,
 * conversation) triples share an id.
 */
export function extractWorkflowId(userKey: string, conversationRef: string): string {
  return `extract:${userKey}:${conversationRef}`;
}

export function conversationWorkflowId(userKey: string, conversationRef: string): string {
  return `conversation:${userKey}:${conversationRef}`;
}

/**
 * One per open conversation: a durable idle timer that every new message resets (signal-with-
 * start from the messages API). Silence for `idleSeconds` starts ExtractMemories without an end
 * call; an end call stops the timer because the API starts the extraction itself.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  let activity = 0;
  let ended = false;
  setHandler(messagesAddedSignal, () => {
    activity++;
  });
  setHandler(conversationEndedSignal, () => {
    ended = true;
  });

  for (;;) {
    const seen = activity;
    const woke = await condition(() => ended || activity !== seen, `${input.idleSeconds}s`);
    if (ended) return { outcome: 'ended-by-call' };
    if (!woke) break;
    // Thousands of messages mean thousands of signals: start afresh before the history gets big.
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof conversationWorkflow>(input);
  }

  // Runs started before conversation refs existed carry none; their ids stay as they were.
  const conversationRef = input.conversationRef ?? input.conversationId;
  try {
    const extraction = await executeChild(extractMemoriesWorkflow, {
      workflowId: extractWorkflowId(input.userId, conversationRef),
      args: [{ userId: input.userId, conversationId: input.conversationId }],
      typedSearchAttributes: [...userSearchAttributes(input.userId), { key: ConversationIdKey, value: conversationRef }],
      staticSummary: `Extract memories of conversation ${conversationRef} (idle ${input.idleSeconds}s)`,
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
    return { outcome: 'idle-extracted', extraction };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'already-extracting' };
    throw err;
  }
}
