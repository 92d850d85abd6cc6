import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { eventStore } from '../../adapters/postgres/event-repository';
import { memoryStore } from '../../adapters/postgres/memory-repository';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { storeMemoryWorkflow } from '../../../workflows';
import { userSearchAttributes } from '../../../workflows/search-attributes';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { createMemoryBody, listMemoriesQuery, memoryParams, memoryView, userParams } from '../schemas';
import { memoryToView } from '../views';
import { PAGE_SESSION_ROUTE } from '../page-session';
import { workflowCallError } from '../workflow-failures';

export const memoryRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/users/:userId/memories',
      {
        schema: {
          summary: 'Store a memory (through the StoreMemory workflow: PostgreSQL row + Chroma vector)',
          params: userParams,
          body: createMemoryBody,
          response: { 201: z.object({ memory: memoryView, decision: z.object({ action: z.string(), reason: z.string() }), workflowId: z.string() }) },
        },
      },
      async (request, reply) => {
        const userId = userKeyOf(request);
        const body = request.body;
        const requestId = body.requestId ?? randomUUID();
        const workflowId = `store:${userId}:${deps.subjects.ref(userId, 'request', requestId)}`;
        let decision;
        try {
          decision = await deps.temporal.workflow.execute(storeMemoryWorkflow, {
            taskQueue: deps.taskQueue,
            workflowId,
            workflowIdConflictPolicy: 'USE_EXISTING',
            args: [{ userId, requestId, text: body.text, type: body.type, scope: body.scope, confidence: body.confidence, importance: body.importance, keywords: body.keywords, metadata: body.metadata, expiresAt: body.expiresAt, at: body.at ?? new Date().toISOString() }],
            typedSearchAttributes: userSearchAttributes(userId),
            staticSummary: `Store a ${body.type} memory for ${userId}`,
          });
        } catch (err) {
          throw workflowCallError(err, { workflowId, failed: 'storing the memory failed' });
        }
        const id = decision.memoryId;
        const memory = id ? await memoryStore.get(deps.pool, userId, id) : undefined;
        if (!memory) throw new MemoryServiceError(ErrorCode.internal, 'memory missing after store', { workflowId });
        return reply.status(201).send({ memory: memoryToView(memory), decision: { action: decision.action, reason: decision.reason }, workflowId });
      },
    );

    app.get(
      '/v1/users/:userId/memories',
      {
        config: PAGE_SESSION_ROUTE,
        schema: {
          summary: 'List memories, filtered by status and type, paged',
          params: userParams,
          querystring: listMemoriesQuery,
          response: { 200: z.object({ memories: z.array(memoryView), total: z.number(), limit: z.number(), offset: z.number() }) },
        },
      },
      async (request) => {
        const { memories, total } = await memoryStore.list(deps.pool, userKeyOf(request), request.query);
        return { memories: memories.map(memoryToView), total, limit: request.query.limit, offset: request.query.offset };
      },
    );

    app.get(
      '/v1/users/:userId/memories/:id',
      { schema: { summary: 'One memory', params: memoryParams, response: { 200: z.object({ memory: memoryView }) } } },
      async (request) => {
        const memory = await memoryStore.get(deps.pool, userKeyOf(request), request.params.id);
        if (!memory) throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id: request.params.id });
        return { memory: memoryToView(memory) };
      },
    );

    app.get(
      '/v1/users/:userId/memories/:id/history',
      {
        config: PAGE_SESSION_ROUTE,
        schema: {
          summary: 'Every decision taken about a memory (audit trail)',
          params: memoryParams,
          response: {
            200: z.object({
              memoryId: z.string(),
              events: z.array(
                z.object({
                  id: z.string(),
                  action: z.string(),
                  reason: z.string(),
                  before: z.unknown().optional(),
                  after: z.unknown().optional(),
                  workflowId: z.string().optional(),
                  runId: z.string().optional(),
                  conversationId: z.string().optional(),
                  messageIds: z.array(z.string()).optional(),
                  actor: z.string(),
                  createdAt: z.string(),
                }),
              ),
            }),
          },
        },
      },
      async (request) => {
        const { id } = request.params;
        const userId = userKeyOf(request);
        const memory = await memoryStore.get(deps.pool, userId, id);
        if (!memory) throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id });
        const events = await eventStore.history(deps.pool, userId, id);
        return { memoryId: id, events: events.map((e) => ({ ...e, id: e.id, createdAt: e.createdAt.toISOString() })) };
      },
    );
  };
