import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getMemory, listMemories, memoryHistory } from '../../services/memory-queries';
import { storeMemory } from '../../services/memory-store';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { createMemoryBody, listMemoriesQuery, memoryParams, memoryView, userParams } from '../schemas';
import { memoryToView } from '../views';
import { PAGE_SESSION_ROUTE } from '../page-session';

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
        const { memory, decision, workflowId } = await storeMemory(deps, userKeyOf(request), request.body);
        return reply.status(201).send({ memory: memoryToView(memory), decision, workflowId });
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
        const { memories, total } = await listMemories(deps, { userId: userKeyOf(request), ...request.query });
        return { memories: memories.map(memoryToView), total, limit: request.query.limit, offset: request.query.offset };
      },
    );

    app.get(
      '/v1/users/:userId/memories/:id',
      { schema: { summary: 'One memory', params: memoryParams, response: { 200: z.object({ memory: memoryView }) } } },
      async (request) => {
        const memory = await getMemory(deps, { userId: userKeyOf(request), id: request.params.id });
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
        const events = await memoryHistory(deps, { userId: userKeyOf(request), id });
        return { memoryId: id, events: events.map((e) => ({ ...e, id: e.id, createdAt: e.createdAt.toISOString() })) };
      },
    );
  };
