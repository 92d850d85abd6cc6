import {
  condition,
  continueAsNew,
  executeChild,
  patched,
  setHandler,
  workflowInfo,
  ParentClosePolicy,
  type ChildWorkflowOptions,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { extractMemoriesWorkflow } from './extract-memories';
import { ConversationIdKey, userSearchAttributes } from '../shared/search-attributes';
import {
  conversationEndedSignal,
  conversationWorkflowId,
  extractWorkflowId,
  messagesAddedSignal,
  type ConversationInput,
  type ConversationOutcome,
  type ExtractionResult,
  type ExtractMemoriesInput,
} from '../../src/conversation/contract';

export { conversationEndedSignal, conversationWorkflowId, extractWorkflowId, messagesAddedSignal };

/** Runs from before follow-up runs gave up when an extraction was running; their histories replay unchanged. */
export const FOLLOW_UP_PATCH = 'conversation-follow-up';

/**
 * One per open conversation: a durable idle timer that every new message resets (signal-with-
 * start from the messages API). Silence for `idleSeconds` starts ExtractMemories without an end
 * call; an end call stops the timer because the API starts the extraction itself.
 *
 * When the idle timer fires while an extraction of the conversation is running (an end call's,
 * the reconciler's), this workflow waits for it and then runs its own: that run starts at the
 * watermark the other left, so messages the other never read are not dropped. Messages that
 * arrive while its own extraction runs re-arm the idle timer for another run.
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

  let extractions = 0;
  let last: ExtractionResult | undefined;
  for (;;) {
    for (;;) {
      const seen = activity;
      const woke = await condition(() => ended || activity !== seen, `${input.idleSeconds}s`);
      if (ended) return { outcome: 'ended-by-call', ...(extractions > 0 ? { extraction: last, extractions } : {}) };
      if (!woke) break;
      // Thousands of messages mean thousands of signals: start afresh before the history gets big.
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof conversationWorkflow>(input);
    }

    // Runs started before conversation refs existed carry none; their ids stay as they were.
    const conversationRef = input.conversationRef ?? input.conversationId;
    const options = {
      workflowId: extractWorkflowId(input.userId, conversationRef),
      args: [{ userId: input.userId, conversationId: input.conversationId }] as [ExtractMemoriesInput],
      typedSearchAttributes: [...userSearchAttributes(input.userId), { key: ConversationIdKey, value: conversationRef }],
      staticSummary: `Extract memories of conversation ${conversationRef} (idle ${input.idleSeconds}s)`,
      parentClosePolicy: ParentClosePolicy.ABANDON,
    };
    if (!patched(FOLLOW_UP_PATCH)) {
      try {
        const extraction = await executeChild(extractMemoriesWorkflow, options);
        return { outcome: 'idle-extracted', extraction };
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'already-extracting' };
        throw err;
      }
    }

    const before = activity;
    const extraction = await extractAfterRunning(options, () => ended);
    if (!extraction) return { outcome: 'ended-by-call', ...(extractions > 0 ? { extraction: last, extractions } : {}) };
    extractions++;
    last = extraction;
    // Nothing arrived while it ran: everything stored before it started has been extracted.
    if (activity === before) return { outcome: 'idle-extracted', extraction, extractions };
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof conversationWorkflow>(input);
  }
}

/**
 * Runs the extraction as a child; while another run of it is going (the id is taken), waits with
 * a growing pause and tries again. Undefined when the conversation was ended meanwhile (the end
 * call starts or joins the extraction itself).
 */
async function extractAfterRunning(options: Omit<ChildWorkflowOptions, 'typeInfo'> & { workflowId: string; args: [ExtractMemoriesInput] }, isEnded: () => boolean): Promise<ExtractionResult | undefined> {
  for (let pauseSeconds = 2; ; pauseSeconds = Math.min(pauseSeconds * 2, 60)) {
    try {
      return await executeChild(extractMemoriesWorkflow, options);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    if (await condition(isEnded, `${pauseSeconds}s`)) return undefined;
  }
}
