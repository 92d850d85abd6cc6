import type { Client } from '@temporalio/client';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { IncomingMessage, StoredMessage } from '../core/ports/conversation';
import type { AppConfig } from '../config';
import type { SubjectKeys } from '../security/subject';
import { withTemporalDeadline } from '../shared/workflow-wait';
import { ConversationWorkflows, conversationWorkflowId, messagesAddedSignal, type ConversationWorkflow, type MessagesAddedInput } from './contract';
import { ConversationIdKey, userSearchAttributes } from '../../workflows/shared/search-attributes';
import type { ServiceDeps } from '../shared/deps';
import { ensureUser } from '../account/settings';

export interface ConversationMessagesDeps extends Pick<ServiceDeps, 'unitOfWork'> {
  temporal: Client;
  taskQueue: string;
  subjects: SubjectKeys;
  idleSeconds: number;
  /** TEMPORAL_CALL_TIMEOUT_MS: how long arming the idle timer may take while the caller waits. */
  config: { reliability: Pick<AppConfig['reliability'], 'temporalCallMs'> };
}

export interface AppendMessagesResult {
  accepted: string[];
  duplicates: string[];
  workflowId: string;
  /**
   * The messages are stored but Temporal did not answer in time, so the idle timer is not armed:
   * the extraction reconciler extracts them once Temporal is back (docs/reliability.md).
   */
  pending: boolean;
}

/**
 * Stores messages in a user's conversation, at most `maxMessages` in all: payload_too_large past
 * that. Appends to one conversation are serialised so the cap cannot be raced past from any entry
 * point. Idempotent per message id.
 */
export async function storeMessages(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userKey: string; conversationId: string; messages: IncomingMessage[]; maxMessages: number },
): Promise<{ inserted: string[]; duplicates: string[] }> {
  const { userKey, conversationId, messages, maxMessages } = input;
  return deps.unitOfWork.run({
    work: async (tx) => {
      const { total, known } = await tx.conversations.lockForAppend({ userId: userKey, conversationId, ids: messages.map((m) => m.id) });
      const fresh = messages.length - known;
      if (fresh > 0 && total + fresh > maxMessages) {
        throw new MemoryServiceError(ErrorCode.payloadTooLarge, `a conversation holds at most ${maxMessages} messages; start a new conversation id`, { conversationId });
      }
      return tx.conversations.append({ userId: userKey, conversationId, messages });
    },
  });
}

/**
 * Stores messages a caller sent through Temporal as `POST …/messages` does: the user is
 * registered on first write, then {@link storeMessages}.
 */
export async function storeCallerMessages(
  deps: Pick<ServiceDeps, 'users' | 'unitOfWork'>,
  input: { user: { userKey: string; tenantId: string; externalId: string }; conversationId: string; messages: IncomingMessage[]; maxMessages: number },
): Promise<{ inserted: string[]; duplicates: string[] }> {
  await ensureUser(deps, input.user);
  return storeMessages(deps, { userKey: input.user.userKey, conversationId: input.conversationId, messages: input.messages, maxMessages: input.maxMessages });
}

/** Whether the user has a conversation with this id (one message at least). */
export async function conversationExists(deps: Pick<ServiceDeps, 'conversations'>, input: { userId: string; conversationId: string }): Promise<boolean> {
  return deps.conversations.exists(input);
}

/** One page of a conversation's messages in arrival order, after `afterSeq`. */
export async function conversationPage(deps: Pick<ServiceDeps, 'conversations'>, input: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<StoredMessage[]> {
  return deps.conversations.page(input);
}

const PAGE = 1000;

/** Every message of a conversation in arrival order, read page by page (`onPage` after each, e.g. a heartbeat). */
export async function allConversationMessages(
  deps: Pick<ServiceDeps, 'conversations'>,
  input: { userId: string; conversationId: string; onPage?: (afterSeq: number) => void },
): Promise<StoredMessage[]> {
  const out: StoredMessage[] = [];
  for (let afterSeq = 0; ; ) {
    const page = await deps.conversations.page({ userId: input.userId, conversationId: input.conversationId, afterSeq, limit: PAGE });
    input.onPage?.(afterSeq);
    out.push(...page);
    if (page.length < PAGE) return out;
    afterSeq = page[page.length - 1]!.seq;
  }
}

/**
 * Appends messages to a user's conversation and (re)arms its idle timer — the write path of
 * POST …/conversations/{id}/messages, and of every other entry point that records a conversation
 * (the OpenAI proxy), so idle extraction follows all of them alike. Idempotent per message id:
 * a repeated id is reported in `duplicates` and stored once.
 */
export async function appendConversationMessages(
  deps: ConversationMessagesDeps,
  limits: { maxMessagesPerConversation: number },
  input: { userKey: string; conversationId: string; messages: IncomingMessage[] },
): Promise<AppendMessagesResult> {
  const { userKey, conversationId, messages } = input;
  const conversationRef = deps.subjects.ref(userKey, 'conversation', conversationId);
  const result = await storeMessages(deps, { userKey, conversationId, messages, maxMessages: limits.maxMessagesPerConversation });
  const workflowId = conversationWorkflowId(userKey, conversationRef);
  let pending = false;
  try {
    await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () =>
      deps.temporal.workflow.signalWithStart<ConversationWorkflow, [MessagesAddedInput]>(ConversationWorkflows.conversation, {
        taskQueue: deps.taskQueue,
        workflowId,
        args: [{ userId: userKey, conversationId, conversationRef, idleSeconds: deps.idleSeconds }],
        signal: messagesAddedSignal,
        signalArgs: [{ count: result.inserted.length }],
        typedSearchAttributes: [...userSearchAttributes(userKey), { key: ConversationIdKey, value: conversationRef }],
        staticSummary: `Conversation ${conversationRef}: idle timer (${deps.idleSeconds}s) before extraction`,
      }),
    );
  } catch {
    // The messages are committed and after the conversation's extraction watermark: the
    // reconciler extracts them. Repeating the call is still safe (ids dedupe) and re-arms the timer.
    pending = true;
  }
  return { accepted: result.inserted, duplicates: result.duplicates, workflowId, pending };
}
