import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MEMORY_VIAS } from '../../core/types';
import { getMemory, listMemories, memoryHistory } from '../../memory/memory-queries';
import { refuseByProvenance, storeMemory } from '../../memory/memory-store';
import { registersNoUser, userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { createMemoryBody, listMemoriesQuery, memoryParams, memoryView, userParams } from '../schemas';
import { memoryToView } from '../views';
import { PAGE_SESSION_ROUTE } from '../page-session';
import { pendingDecision, runMemoryDecision } from '../memory-decision';
import { ErrorCode, MemoryServiceError } from '../../core/errors';

export const memoryRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/users/:userId/memories',
      {
        config: {
          beforeRegistration: (request) => {
            const { via, ...body } = request.body as z.infer<typeof createMemoryBody>;
            refuseByProvenance(deps, body, via ?? 'api');
          },
          takesBackRegistration: true,
        },
        schema: {
          summary: 'Store a memory (through the StoreMemory workflow: PostgreSQL row + Chroma vector); 202 with the workflow id when it takes longer than WORKFLOW_WAIT_TIMEOUT_MS',
          params: userParams,
          body: createMemoryBody,
          response: {
            201: z.object({ memory: memoryView, decision: z.object({ action: z.string(), reason: z.string() }), workflowId: z.string() }),
            202: z.object({ workflowId: z.string(), pending: z.literal(true) }),
          },
        },
      },
      async (request, reply) => {
        const { via, ...body } = request.body;
        const stored = await storeMemory(deps, userKeyOf(request), body, via ?? 'api');
        // Accepted and durable: the memory is written when the workflow gets to it (same requestId: same workflow).
        if (stored.pending) return reply.status(202).send({ workflowId: stored.workflowId, pending: true });
        return reply.status(201).send({ memory: memoryToView(stored.memory), decision: stored.decision, workflowId: stored.workflowId });
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

    app.post(
      '/v1/users/:userId/memories/:id/confirm',
      {
        config: { ...PAGE_SESSION_ROUTE, registersUser: registersNoUser },
        schema: {
          summary:
            'Confirm a memory an agent or app wrote (pending: true): a pending instruction becomes one of the user\'s standing instructions from the next recall on; audited as a MemoryDecision. Repeating it returns changed: false',
          params: memoryParams,
          // 202: accepted, not taken within WORKFLOW_WAIT_TIMEOUT_MS; confirmed when a worker gets to it.
          response: { 200: z.object({ memory: memoryView, changed: z.boolean(), workflowId: z.string() }), 202: pendingDecision },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const userKey = userKeyOf(request);
        const result = await runMemoryDecision(deps, { userKey, memoryId: id, action: 'confirm', now: new Date(), actor: request.pageSession ? 'page' : 'api' });
        if (result.pending) return reply.status(202).send({ workflowId: result.workflowId, pending: true });
        if (result.action !== 'confirm') throw new MemoryServiceError(ErrorCode.internal, 'unexpected decision outcome');
        return { memory: memoryToView(await getMemory(deps, { userId: userKey, id })), changed: result.changed, workflowId: result.workflowId };
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
                  via: z.enum(MEMORY_VIAS).optional(),
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
