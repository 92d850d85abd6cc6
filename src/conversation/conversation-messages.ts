import type { Client } from '@temporalio/client';
import { ErrorCode, isDeadlock, MemoryServiceError } from '../core/errors';
import type { IncomingMessage, IndexedMessage, StoredMessage } from '../core/ports/conversation';
import { RuleWorkError } from '../shared/rule-work';
import type { AppConfig } from '../config';
import type { SubjectKeys } from '../security/subject';
import { withTemporalDeadline } from '../shared/workflow-wait';
import { ConversationWorkflows, conversationWorkflowId, messagesAddedSignal, type ConversationWorkflow, type MessagesAddedInput } from './contract';
import { ConversationIdKey, userSearchAttributes } from '../../workflows/shared/search-attributes';
import type { ServiceDeps } from '../shared/deps';
import type { MemoryTransaction } from '../core/ports/transaction';
import { writeAsRegistered } from '../account/settings';

export interface ConversationMessagesDeps extends Pick<ServiceDeps, 'unitOfWork' | 'rules'> {
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
 * What a message id sent again with another role or content means. `refuse`: the caller's mistake
 * (an id reused, a counter reset), refused whole with `request_id_reused`. `keepFirst`: a
 * duplicate like any other, the stored message stands — the OpenAI proxy's choice, whose retried
 * turn may bring another wording of the same answer (src/proxy/chat.ts, `turnIds`).
 */
export type ReusedMessageIds = 'refuse' | 'keepFirst';

/**
 * The re-sent ids among `messages` whose stored message has another role or content. The messages
 * come as the write takes them (trimmed, mended, truncated by their entry point), so they compare
 * with what it stored; their time is not compared: a re-send is dated by its own arrival when it
 * gives none, and the stored message keeps the first.
 */
async function reusedIds(tx: Pick<MemoryTransaction, 'conversations'>, input: { userKey: string; conversationId: string; messages: IncomingMessage[] }): Promise<string[]> {
  const stored = new Map((await tx.conversations.stored({ userId: input.userKey, conversationId: input.conversationId, ids: input.messages.map((m) => m.id) })).map((m) => [m.id, m]));
  return input.messages.filter((m) => {
    const held = stored.get(m.id);
    return held !== undefined && (held.role !== m.role || held.content !== m.content);
  }).map((m) => m.id);
}

/**
 * The batch with its conversation-search postings, segmented by the rule pool before the lock:
 * the largest batch is seconds of CPU, which the event loop serving every other user must not
 * spend, nor the conversation's append lock wait for (a chat turn's few messages, a millisecond or
 * two, the pool segments on this thread: rule-pool.ts). Every message is segmented, the ones that turn out
 * to be stored already too (their postings are not used). A batch whose segmentation runs out of
 * its time is refused whole, before anything of it is written.
 */
async function withPostings(rules: ServiceDeps['rules'], conversationId: string, messages: IncomingMessage[]): Promise<IndexedMessage[]> {
  try {
    const postings = await rules.indexPostings({ texts: messages.map((m) => m.content) });
    return messages.map((m, i) => ({ ...m, postings: postings[i]! }));
  } catch (err) {
    if (err instanceof RuleWorkError && err.reason === 'timeout') {
      throw new MemoryServiceError(
        ErrorCode.payloadTooLarge,
        'the messages took too long to index for conversation search, and nothing of this request was stored; send fewer or shorter messages per call',
        { conversationId, reason: 'index_time_limit' },
        { cause: err },
      );
    }
    throw err;
  }
}

/**
 * Stores messages in a user's conversation, at most `maxMessages` in all: payload_too_large past
 * that. Appends to one conversation are serialised so the cap cannot be raced past from any entry
 * point. Idempotent per message id; an id stored before with another role or content refuses the
 * whole request when `reused` is `refuse` (the default), before anything of it is written. The
 * messages are segmented for conversation search first, off the event loop and outside the lock
 * (payload_too_large with `reason: index_time_limit` when that runs out of time).
 */
export async function storeMessages(
  deps: Pick<ServiceDeps, 'unitOfWork' | 'rules'>,
  input: { userKey: string; conversationId: string; messages: IncomingMessage[]; maxMessages: number; reused?: ReusedMessageIds },
): Promise<{ inserted: string[]; duplicates: string[] }> {
  const messages = await withPostings(deps.rules, input.conversationId, input.messages);
  return appendIndexed(deps, { ...input, messages });
}

/** {@link storeMessages} once the batch is segmented: the refusals that need what is stored, and the append. */
async function appendIndexed(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userKey: string; conversationId: string; messages: IndexedMessage[]; maxMessages: number; reused?: ReusedMessageIds },
): Promise<{ inserted: string[]; duplicates: string[] }> {
  // The append locks one conversation, not the user: a purge racing it takes the user's
  // document-frequency rows in another order, and PostgreSQL rolls one transaction back to break
  // the deadlock. Only the database was touched, so the append is tried again instead of answering 500.
  for (let attempt = 1; ; attempt++) {
    try {
      return await appendOnce(deps, input);
    } catch (err) {
      if (!isDeadlock(err) || attempt >= APPEND_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40 * attempt));
    }
  }
}

/** Attempts of an append PostgreSQL rolls back to break a deadlock. */
const APPEND_ATTEMPTS = 3;

async function appendOnce(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userKey: string; conversationId: string; messages: IndexedMessage[]; maxMessages: number; reused?: ReusedMessageIds },
): Promise<{ inserted: string[]; duplicates: string[] }> {
  const { userKey, conversationId, messages, maxMessages } = input;
  return deps.unitOfWork.run({
    work: async (tx) => {
      const { total, known } = await tx.conversations.lockForAppend({ userId: userKey, conversationId, ids: messages.map((m) => m.id) });
      // Under the append lock: a concurrent request with the same ids is either stored already or waits.
      if (known > 0 && (input.reused ?? 'refuse') === 'refuse') {
        const conflicting = await reusedIds(tx, { userKey, conversationId, messages });
        if (conflicting.length > 0) {
          throw new MemoryServiceError(
            ErrorCode.requestIdReused,
            'message ids sent before with another role or content: the stored messages stand and nothing of this request was written; send new messages under new ids',
            { conversationId, messageIds: conflicting },
          );
        }
      }
      const fresh = messages.length - known;
      if (fresh > 0 && total + fresh > maxMessages) throw conversationFull(conversationId, maxMessages);
      return tx.conversations.append({ userId: userKey, conversationId, messages });
    },
  });
}

const conversationFull = (conversationId: string, maxMessages: number) =>
  new MemoryServiceError(ErrorCode.payloadTooLarge, `a conversation holds at most ${maxMessages} messages; start a new conversation id`, { conversationId });

/**
 * Stores messages a caller sent through Temporal as `POST …/messages` does: the user is
 * registered on first write, then {@link storeMessages}; an id sent again with another role or
 * content is refused (`request_id_reused`, which the activity does not retry). What can be refused
 * without the stored messages — segmenting that runs out of time, a batch larger than a whole
 * conversation may be — is refused before a new user is registered; a refusal that needs them (the
 * cap with what the conversation holds, a reused id) takes back the registration this call made.
 */
export async function storeCallerMessages(
  deps: Pick<ServiceDeps, 'users' | 'unitOfWork' | 'rules'>,
  input: {
    user: { userKey: string; tenantId: string; externalId: string };
    conversationId: string;
    messages: IncomingMessage[];
    maxMessages: number;
    /** Hears of a take-back that failed after a refusal (the refusal stands, the user stays). */
    onTakeBackFailed: (err: unknown) => void;
  },
): Promise<{ inserted: string[]; duplicates: string[] }> {
  const { user, conversationId, maxMessages } = input;
  const messages = await withPostings(deps.rules, conversationId, input.messages);
  return writeAsRegistered(deps, {
    user,
    // Only ever run for a user with nothing stored, where every message of the batch is new.
    beforeRegistering: async () => {
      if (messages.length > maxMessages) throw conversationFull(conversationId, maxMessages);
    },
    write: () => appendIndexed(deps, { userKey: user.userKey, conversationId, messages, maxMessages }),
    onTakeBackFailed: input.onTakeBackFailed,
  });
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
 * a repeated id is reported in `duplicates` and stored once. `reused` says what an id stored with
 * another role or content means; it is `keepFirst` unless the entry point asks to refuse, as the
 * messages route does, since the proxy's ids stand for a turn whose answer a retry may reword.
 */
export async function appendConversationMessages(
  deps: ConversationMessagesDeps,
  limits: { maxMessagesPerConversation: number },
  input: { userKey: string; conversationId: string; messages: IncomingMessage[]; reused?: ReusedMessageIds },
): Promise<AppendMessagesResult> {
  const { userKey, conversationId, messages } = input;
  const conversationRef = deps.subjects.ref(userKey, 'conversation', conversationId);
  const result = await storeMessages(deps, { userKey, conversationId, messages, maxMessages: limits.maxMessagesPerConversation, reused: input.reused ?? 'keepFirst' });
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
