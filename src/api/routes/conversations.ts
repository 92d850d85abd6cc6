import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { conversationStore } from '../../adapters/postgres/conversation-repository';
import { inTransaction } from '../../adapters/postgres/pool';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { conversationEndedSignal, conversationWorkflow, conversationWorkflowId, extractMemoriesWorkflow, extractWorkflowId, messagesAddedSignal } from '../../../workflows';
import { ConversationIdKey, userSearchAttributes } from '../../../workflows/search-attributes';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { conversationParams, isoDate, messageIdSchema, textSchema } from '../schemas';
import { waitForResult, withTemporalDeadline } from '../../services/workflow-wait';

const decisionView = z.object({
  action: z.string(),
  reason: z.string(),
  memoryId: z.string().optional(),
  affectedIds: z.array(z.string()),
  text: z.string(),
  type: z.string(),
  messageIds: z.array(z.string()),
  replayed: z.boolean(),
});

export const conversationRoutes =
  (
    deps: ApiDeps,
    limits: { maxMessageChars: number; maxMessagesPerConversation: number; onUserActive?: (userId: string) => Promise<void> },
  ): FastifyPluginAsyncZod =>
  async (app) => {
    const message = z.object({
      id: messageIdSchema,
      role: z.enum(['user', 'assistant']),
      content: textSchema(limits.maxMessageChars),
      at: isoDate.optional(),
    });
    const body = z.union([message, z.object({ messages: z.array(message).min(1, 'at least one message').max(1000) })]);

    app.post(
      '/v1/users/:userId/conversations/:conversationId/messages',
      {
        schema: {
          summary: 'Append one or many messages; resets the conversation idle timer. Idempotent per message id. `pending`: stored, but Temporal was unreachable; extraction follows on recovery.',
          params: conversationParams,
          body,
          response: { 202: z.object({ accepted: z.array(z.string()), duplicates: z.array(z.string()), workflowId: z.string(), pending: z.boolean() }) },
        },
      },
      async (request, reply) => {
        const { conversationId } = request.params;
        const userId = userKeyOf(request);
        const conversationRef = deps.subjects.ref(userId, 'conversation', conversationId);
        const messages = 'messages' in request.body ? request.body.messages : [request.body];
        const ids = new Set(messages.map((m) => m.id));
        if (ids.size !== messages.length) throw new MemoryServiceError(ErrorCode.validationFailed, 'message ids must be unique within a request');
        const receivedAt = new Date();
        const result = await inTransaction(deps.pool, async (client) => {
          // Serialise appends to one conversation so the size cap cannot be raced past.
          await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [`${userId}/${conversationId}`]);
          const { rows } = await client.query<{ n: string; known: string }>(
            `SELECT count(*) AS n, count(*) FILTER (WHERE message_id = ANY($3::text[])) AS known
               FROM messages WHERE user_id = $1 AND conversation_id = $2`,
            [userId, conversationId, messages.map((m) => m.id)],
          );
          const fresh = messages.length - Number(rows[0]!.known);
          if (fresh > 0 && Number(rows[0]!.n) + fresh > limits.maxMessagesPerConversation) {
            throw new MemoryServiceError(ErrorCode.payloadTooLarge, `a conversation holds at most ${limits.maxMessagesPerConversation} messages; start a new conversation id`, { conversationId });
          }
          return conversationStore.append(
            client,
            userId,
            conversationId,
            messages.map((m) => ({ id: m.id, role: m.role, content: m.content, at: m.at ? new Date(m.at) : receivedAt, truncated: false })),
          );
        });
        const workflowId = conversationWorkflowId(userId, conversationRef);
        let pending = false;
        try {
          await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () =>
            deps.temporal.workflow.signalWithStart(conversationWorkflow, {
              taskQueue: deps.taskQueue,
              workflowId,
              args: [{ userId, conversationId, conversationRef, idleSeconds: deps.idleSeconds }],
              signal: messagesAddedSignal,
              signalArgs: [{ count: result.inserted.length }],
              typedSearchAttributes: [...userSearchAttributes(userId), { key: ConversationIdKey, value: conversationRef }],
              staticSummary: `Conversation ${conversationRef}: idle timer (${deps.idleSeconds}s) before extraction`,
            }),
          );
        } catch (err) {
          // The messages are committed and after the conversation's extraction watermark: the
          // extraction reconciler extracts them once Temporal is back (docs/reliability.md).
          // Repeating the call is still safe (ids dedupe) and re-arms the idle timer.
          request.log.warn({ err, workflowId }, 'messages stored, idle timer not armed: extraction left to the reconciler');
          pending = true;
        }
        // The user's digest and nudge schedules, set up off the request: a failure is logged and
        // retried on their next message, the messages are safe either way.
        if (limits.onUserActive) void limits.onUserActive(userId).catch((err: unknown) => request.log.warn({ err, userId }, 'proactive schedules not ensured'));
        return reply.status(202).send({ accepted: result.inserted, duplicates: result.duplicates, workflowId, pending });
      },
    );

    app.post(
      '/v1/users/:userId/conversations/:conversationId/end',
      {
        schema: {
          summary: 'End a conversation: starts (or joins) ExtractMemories; ?wait=true returns its decisions, or 202 with `pending` after WORKFLOW_WAIT_TIMEOUT_MS',
          params: conversationParams,
          querystring: z.object({ wait: z.enum(['true', 'false']).default('false') }),
          response: {
            200: z.object({
              workflowId: z.string(),
              runId: z.string(),
              result: z.object({ messagesProcessed: z.number(), counts: z.record(z.string(), z.number()), decisions: z.array(decisionView) }),
            }),
            202: z.object({ workflowId: z.string(), runId: z.string(), pending: z.boolean().optional() }),
          },
        },
      },
      async (request, reply) => {
        const { conversationId } = request.params;
        const userId = userKeyOf(request);
        const conversationRef = deps.subjects.ref(userId, 'conversation', conversationId);
        if (!(await conversationStore.exists(deps.pool, userId, conversationId))) {
          throw new MemoryServiceError(ErrorCode.notFound, 'conversation has no messages', { conversationId });
        }
        const workflowId = extractWorkflowId(userId, conversationRef);
        const handle = await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, async () => {
          try {
            await deps.temporal.workflow.getHandle(conversationWorkflowId(userId, conversationRef)).signal(conversationEndedSignal);
          } catch (err) {
            // No open idle timer (already fired or never armed) is fine: the extraction below is what counts.
            if (!(err instanceof WorkflowNotFoundError)) throw err;
          }
          return deps.temporal.workflow.start(extractMemoriesWorkflow, {
            taskQueue: deps.taskQueue,
            workflowId,
            workflowIdConflictPolicy: 'USE_EXISTING',
            args: [{ userId, conversationId }],
            typedSearchAttributes: [...userSearchAttributes(userId), { key: ConversationIdKey, value: conversationRef }],
            staticSummary: `Extract memories of conversation ${conversationRef} (ended by call)`,
          });
        }).catch((err: unknown) => {
          if (err instanceof MemoryServiceError) throw err;
          // Nothing is lost: the messages wait after the watermark for the extraction reconciler.
          throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable: the extraction follows once it is back', { workflowId }, { cause: err });
        });
        const runId = handle.firstExecutionRunId;
        if (request.query.wait !== 'true') return reply.status(202).send({ workflowId, runId });
        const waited = await waitForResult(deps.temporal, () => handle.result(), deps.config.reliability.workflowWaitMs);
        // Still running: the decisions land anyway; the workflow id is where to look.
        if (!waited.done) return reply.status(202).send({ workflowId, runId, pending: true });
        const result = waited.result;
        return reply.status(200).send({ workflowId, runId, result: { messagesProcessed: result.messagesProcessed, counts: result.counts, decisions: result.decisions } });
      },
    );
  };
