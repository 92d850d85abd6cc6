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
import { ConversationIdKey, MemoryUserIdKey } from './search-attributes';
import type { ConversationInput, ConversationOutcome, MessagesAddedInput } from './types';

export const messagesAddedSignal = defineSignal<[MessagesAddedInput]>('messagesAddedSignal');
export const conversationEndedSignal = defineSignal<[]>('conversationEndedSignal');

export function extractWorkflowId(userId: string, conversationId: string): string {
  return `extract:${userId}:${conversationId}`;
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

  try {
    const extraction = await executeChild(extractMemoriesWorkflow, {
      workflowId: extractWorkflowId(input.userId, input.conversationId),
      args: [{ userId: input.userId, conversationId: input.conversationId }],
      typedSearchAttributes: [
        { key: MemoryUserIdKey, value: input.userId },
        { key: ConversationIdKey, value: input.conversationId },
      ],
      staticSummary: `Extract memories of conversation ${input.conversationId} (idle ${input.idleSeconds}s)`,
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
    return { outcome: 'idle-extracted', extraction };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'already-extracting' };
    throw err;
  }
}
