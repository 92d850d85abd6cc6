import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { forgetMemory, restoreMemory } from '../../services/memory-lifecycle';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { memoryParams, memoryView } from '../schemas';
import { memoryToView } from '../views';

/**
 * Explicit forgetting and restoring. Both act at once in one transaction (row, postings, outbox,
 * audit event with actor `api`) and then sync the vector; neither needs a workflow, because
 * nothing here waits or retries for long.
 */
export const lifecycleRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.delete(
      '/v1/users/:userId/memories/:id',
      {
        schema: {
          summary: 'Forget a memory: status expired, removed from search and from the vector store, audited',
          params: memoryParams,
          response: { 200: z.object({ memory: memoryView, changed: z.boolean(), vectorRemoved: z.boolean() }) },
        },
      },
      async (request) => {
        const { id } = request.params;
        const userId = userKeyOf(request);
        const result = await forgetMemory(deps, { userId, id, now: new Date(), audit: { actor: 'api' } });
        return { memory: memoryToView(result.memory), changed: result.changed, vectorRemoved: result.vectorRemoved };
      },
    );

    app.post(
      '/v1/users/:userId/memories/:id/restore',
      {
        schema: {
          summary: 'Restore an archived memory: active again, re-indexed and re-embedded, decay reset, audited',
          params: memoryParams,
          response: { 200: z.object({ memory: memoryView, vectorSynced: z.boolean() }) },
        },
      },
      async (request) => {
        const { id } = request.params;
        const userId = userKeyOf(request);
        const result = await restoreMemory(deps, { userId, id, now: new Date(), audit: { actor: 'api' } });
        return { memory: memoryToView(result.memory), vectorSynced: result.vectorSynced };
      },
    );
  };
