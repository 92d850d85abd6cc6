import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getMemory } from '../../memory/memory-queries';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { registersNoUser, userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { pendingDecision, runMemoryDecision } from '../memory-decision';
import { memoryParams, memoryView } from '../schemas';
import { memoryToView } from '../views';

/**
 * Explicit forgetting, restoring and erasing. Each is one decision in one transaction (row,
 * postings, outbox, audit event with actor `api`) and then the vector — run as a short
 * MemoryDecision workflow (src/api/memory-decision.ts), so every decision the API takes is in
 * Temporal UI under the user's `MemoryUserId`, with the decision as its result (docs/audit.md).
 */
export const lifecycleRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    /** The memory as the decision left it (the workflow's result carries no memory text). */
    const decided = async (userKey: string, id: string) => {
      const memory = await getMemory(deps, { userId: userKey, id });
      return memory;
    };

    app.delete(
      '/v1/users/:userId/memories/:id',
      {
        schema: {
          summary:
            'Forget a memory: status expired, removed from search and from the vector store, audited. ?hard=true erases it instead: row, history, vector, source messages and derived text deleted',
          params: memoryParams,
          querystring: z.object({ hard: z.enum(['true', 'false']).default('false') }),
          response: {
            // The decision is accepted but not taken within WORKFLOW_WAIT_TIMEOUT_MS: it is applied when a worker gets to it.
            202: pendingDecision,
            200: z.union([
              z.object({ memory: memoryView, changed: z.boolean(), vectorRemoved: z.boolean(), workflowId: z.string() }),
              z.object({
                id: z.string(),
                erased: z.literal(true),
                removed: z.record(z.string(), z.number()),
                vectorRemoved: z.boolean(),
                conversations: z.array(z.string()),
                episodesRebuilt: z.boolean(),
                workflowId: z.string(),
              }),
            ]),
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const userId = userKeyOf(request);
        // Hard erasure on request; forgetting (an audited soft delete) stays the default.
        if (request.query.hard === 'true') {
          const erased = await runMemoryDecision(deps, { userKey: userId, memoryId: id, action: 'erase', now: new Date() });
          if (erased.pending) return reply.status(202).send({ workflowId: erased.workflowId, pending: true });
          if (erased.action !== 'erase') throw new MemoryServiceError(ErrorCode.internal, 'unexpected decision outcome');
          return { id, erased: true as const, removed: erased.removed, vectorRemoved: erased.vectorRemoved, conversations: erased.conversations, episodesRebuilt: erased.episodesRebuilt, workflowId: erased.workflowId };
        }
        const result = await runMemoryDecision(deps, { userKey: userId, memoryId: id, action: 'forget', now: new Date() });
        if (result.pending) return reply.status(202).send({ workflowId: result.workflowId, pending: true });
        if (result.action !== 'forget') throw new MemoryServiceError(ErrorCode.internal, 'unexpected decision outcome');
        return { memory: memoryToView(await decided(userId, id)), changed: result.changed, vectorRemoved: result.vectorRemoved, workflowId: result.workflowId };
      },
    );

    app.post(
      '/v1/users/:userId/memories/:id/restore',
      {
        config: { registersUser: registersNoUser },
        schema: {
          summary: 'Restore an archived memory: active again, re-indexed and re-embedded, decay reset, audited',
          params: memoryParams,
          response: { 200: z.object({ memory: memoryView, vectorSynced: z.boolean(), workflowId: z.string() }), 202: pendingDecision },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const userId = userKeyOf(request);
        const result = await runMemoryDecision(deps, { userKey: userId, memoryId: id, action: 'restore', now: new Date() });
        if (result.pending) return reply.status(202).send({ workflowId: result.workflowId, pending: true });
        if (result.action !== 'restore') throw new MemoryServiceError(ErrorCode.internal, 'unexpected decision outcome');
        return { memory: memoryToView(await decided(userId, id)), vectorSynced: result.vectorSynced, workflowId: result.workflowId };
      },
    );
  };
