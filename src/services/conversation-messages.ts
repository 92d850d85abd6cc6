import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { conversationStore, type IncomingMessage } from '../adapters/postgres/conversation-repository';
import { inTransaction } from '../adapters/postgres/pool';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { SubjectKeys } from '../security/subject';
import { conversationWorkflow, conversationWorkflowId, messagesAddedSignal } from '../../workflows';
import { ConversationIdKey, userSearchAttributes } from '../../workflows/search-attributes';

export interface ConversationMessagesDeps {
  pool: pg.Pool;
  temporal: Client;
  taskQueue: string;
  subjects: SubjectKeys;
  idleSeconds: number;
}

export interface AppendMessagesResult {
  accepted: string[];
  duplicates: string[];
  workflowId: string;
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
  const result = await inTransaction(deps.pool, async (client) => {
    // Serialise appends to one conversation so the size cap cannot be raced past.
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [`${userKey}/${conversationId}`]);
    const { rows } = await client.query<{ n: string; known: string }>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE message_id = ANY($3::text[])) AS known
         FROM messages WHERE user_id = $1 AND conversation_id = $2`,
      [userKey, conversationId, messages.map((m) => m.id)],
    );
    const fresh = messages.length - Number(rows[0]!.known);
    if (fresh > 0 && Number(rows[0]!.n) + fresh > limits.maxMessagesPerConversation) {
      throw new MemoryServiceError(ErrorCode.payloadTooLarge, `a conversation holds at most ${limits.maxMessagesPerConversation} messages; start a new conversation id`, { conversationId });
    }
    return conversationStore.append(client, userKey, conversationId, messages);
  });
  const workflowId = conversationWorkflowId(userKey, conversationRef);
  try {
    await deps.temporal.workflow.signalWithStart(conversationWorkflow, {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [{ userId: userKey, conversationId, conversationRef, idleSeconds: deps.idleSeconds }],
      signal: messagesAddedSignal,
      signalArgs: [{ count: result.inserted.length }],
      typedSearchAttributes: [...userSearchAttributes(userKey), { key: ConversationIdKey, value: conversationRef }],
      staticSummary: `Conversation ${conversationRef}: idle timer (${deps.idleSeconds}s) before extraction`,
    });
  } catch (err) {
    // The messages are stored; repeating the call is safe (ids dedupe) and re-arms the timer.
    throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'messages stored, but the idle timer could not be armed; retry the call', { workflowId }, { cause: err });
  }
  return { accepted: result.inserted, duplicates: result.duplicates, workflowId };
}
