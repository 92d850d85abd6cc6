import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { appendConversationMessages, conversationExists } from '../../conversation/conversation-messages';
import { registersNoUser, userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { conversationParams, messageIdSchema, saidAt, textSchema } from '../schemas';
import { endConversation } from '../../conversation/conversation-end';
import { waitForResult } from '../../shared/workflow-wait';

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
    const message = z.strictObject({
      id: messageIdSchema,
      role: z.enum(['user', 'assistant']),
      content: textSchema(limits.maxMessageChars),
      at: saidAt.optional(),
    });
    const body = z.union([message, z.strictObject({ messages: z.array(message).min(1, 'at least one message').max(1000) })]);
    type Body = z.infer<typeof body>;
    const messagesOf = (b: Body) => ('messages' in b ? b.messages : [b]);
    const refuseRepeatedIds = (b: Body): void => {
      const messages = messagesOf(b);
      if (new Set(messages.map((m) => m.id)).size !== messages.length) throw new MemoryServiceError(ErrorCode.validationFailed, 'message ids must be unique within a request');
    };

    app.post(
      '/v1/users/:userId/conversations/:conversationId/messages',
      {
        config: { beforeRegistration: (request) => refuseRepeatedIds(request.body as Body), takesBackRegistration: true },
        // The body is one message or {messages: [...]}; the union took the first shape that fit and
        // dropped the rest, so a body with both stored the one message and lost the batch, with a 202.
        preValidation: async (request) => {
          const b = request.body;
          if (b !== null && typeof b === 'object' && !Array.isArray(b) && 'messages' in b && ('id' in b || 'role' in b || 'content' in b)) {
            throw new MemoryServiceError(ErrorCode.validationFailed, 'send one message ({id, role, content}) or a batch ({messages: [...]}), not both in one body');
          }
        },
        schema: {
          summary:
            'Append one or many messages; resets the conversation idle timer. Idempotent per message id (an id stored with another role or content: 422 request_id_reused, nothing written). `pending`: stored, but Temporal was unreachable; extraction follows on recovery.',
          params: conversationParams,
          body,
          response: { 202: z.object({ accepted: z.array(z.string()), duplicates: z.array(z.string()), workflowId: z.string(), pending: z.boolean() }) },
        },
      },
      async (request, reply) => {
        const { conversationId } = request.params;
        const userId = userKeyOf(request);
        refuseRepeatedIds(request.body);
        const messages = messagesOf(request.body);
        const receivedAt = new Date();
        const { accepted, duplicates, workflowId, pending } = await appendConversationMessages(deps, limits, {
          userKey: userId,
          conversationId,
          messages: messages.map((m) => ({ id: m.id, role: m.role, content: m.content, at: m.at ? new Date(m.at) : receivedAt, truncated: false })),
          // A client's id re-sent with another text is its mistake: telling it `duplicates` would
          // let it believe the new text is stored.
          reused: 'refuse',
        });
        // pending: stored, but Temporal did not answer in time; the messages are after the
        // conversation's extraction watermark, so the extraction reconciler extracts them once
        // Temporal is back (docs/reliability.md).
        if (pending) request.log.warn({ workflowId }, 'messages stored, idle timer not armed: extraction left to the reconciler');
        // The user's digest and nudge schedules, set up off the request: a failure is logged and
        // retried on their next message, the messages are safe either way.
        if (limits.onUserActive) void limits.onUserActive(userId).catch((err: unknown) => request.log.warn({ err, userId }, 'proactive schedules not ensured'));
        return reply.status(202).send({ accepted, duplicates, workflowId, pending });
      },
    );

    app.post(
      '/v1/users/:userId/conversations/:conversationId/end',
      {
        // Only a conversation with messages ends: a user who has none is answered 404.
        config: { registersUser: registersNoUser },
        schema: {
          summary: 'End a conversation: starts (or joins) ExtractMemories; ?wait=true returns its decisions, or 202 with `pending` after WORKFLOW_WAIT_TIMEOUT_MS. 202 `pending` without runId: Temporal was unreachable, the end request is stored and the reconciler extracts on recovery.',
          params: conversationParams,
          querystring: z.object({ wait: z.enum(['true', 'false']).default('false') }),
          response: {
            200: z.object({
              workflowId: z.string(),
              runId: z.string(),
              result: z.object({ messagesProcessed: z.number(), counts: z.record(z.string(), z.number()), decisions: z.array(decisionView) }),
            }),
            // runId is absent when Temporal was unreachable (pending: the end request is stored).
            202: z.object({ workflowId: z.string(), runId: z.string().optional(), pending: z.boolean().optional() }),
          },
        },
      },
      async (request, reply) => {
        const { conversationId } = request.params;
        const userId = userKeyOf(request);
        if (!(await conversationExists(deps, { userId, conversationId }))) {
          throw new MemoryServiceError(ErrorCode.notFound, 'conversation has no messages', { conversationId });
        }
        const ended = await endConversation(deps, { userKey: userId, conversationId });
        if (ended.pending) {
          request.log.warn({ workflowId: ended.workflowId }, 'end request stored, Temporal unreachable: extraction left to the reconciler');
          return reply.status(202).send({ workflowId: ended.workflowId, pending: true });
        }
        const { workflowId, handle } = ended;
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
