import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { recall, type AfterRecall } from '../../recall/recall';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { recallOptionsOf, recallResponse } from '../recall-contract';
import { recallBody, userParams } from '../schemas';

export const recallRoutes =
  (deps: ApiDeps, hooks: { afterRecall?: AfterRecall } = {}): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/users/:userId/recall',
      {
        config: { readOnly: true },
        schema: {
          summary: 'Hybrid recall for one chat message, formatted for the prompt within a token budget',
          params: userParams,
          body: recallBody,
          // Shared with the `recall` activity of the Temporal contract (src/api/recall-contract.ts).
          response: { 200: recallResponse },
        },
      },
      async (request) => {
        const userId = userKeyOf(request);
        const b = request.body;
        const result = await recall(deps, userId, b.query, recallOptionsOf(b));
        if (result.memories.length > 0) hooks.afterRecall?.(userId, result.memories, b.now ? new Date(b.now) : new Date());
        return { ...result, memories: result.memories.map((m) => ({ ...m, source: m.source as Record<string, unknown> })) };
      },
    );
  };
