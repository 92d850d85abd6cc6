import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { eraseMemory } from '../../services/memory-erase';
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
          summary:
            'Forget a memory: status expired, removed from search and from the vector store, audited. ?hard=true erases it instead: row, history, vector, source messages and derived text deleted',
          params: memoryParams,
          querystring: z.object({ hard: z.enum(['true', 'false']).default('false') }),
          response: {
            200: z.union([
              z.object({ memory: memoryView, changed: z.boolean(), vectorRemoved: z.boolean() }),
              z.object({
                id: z.string(),
                erased: z.literal(true),
                removed: z.record(z.string(), z.number()),
                vectorRemoved: z.boolean(),
                conversations: z.array(z.string()),
                episodesRebuilt: z.boolean(),
              }),
            ]),
          },
        },
      },
      async (request) => {
        const { id } = request.params;
        const userId = userKeyOf(request);
        // Hard erasure on request; forgetting (an audited soft delete) stays the default.
        if (request.query.hard === 'true') {
          const erased = await eraseMemory(deps, { userKey: userId, id, now: new Date(), actor: 'api' });
          return { ...erased, removed: { ...erased.removed } };
        }
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
