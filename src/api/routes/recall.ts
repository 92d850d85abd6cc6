import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { zoneFromIsoOffset } from '../../core/time/zone-hint';
import { recall } from '../../services/recall';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { recallBody, userParams } from '../schemas';

export const recallRoutes =
  (deps: ApiDeps, hooks: { afterRecall?: (userId: string, memoryIds: string[], at: Date) => void } = {}): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/users/:userId/recall',
      {
        config: { readOnly: true },
        schema: {
          summary: 'Hybrid recall for one chat message, formatted for the prompt within a token budget',
          params: userParams,
          body: recallBody,
          response: {
            200: z.object({
              context: z.object({ system: z.string(), userPrefix: z.string() }),
              memories: z.array(
                z.object({
                  id: z.string(),
                  text: z.string(),
                  type: z.string(),
                  scope: z.string(),
                  score: z.number(),
                  routes: z.array(z.string()),
                  createdAt: z.string(),
                  source: z.record(z.string(), z.unknown()),
                }),
              ),
              tokens: z.number(),
              routes: z.array(z.object({ route: z.string(), ok: z.boolean(), ms: z.number(), hits: z.number() })),
              error: z.object({ code: z.string(), message: z.string(), routes: z.array(z.string()) }).optional(),
              pastExchanges: z.array(
                z.object({
                  conversationId: z.string(),
                  date: z.string(),
                  messageIds: z.array(z.string()),
                  userText: z.string(),
                  assistantText: z.string(),
                  score: z.number(),
                  routes: z.array(z.string()),
                }),
              ),
              injectedMessageIds: z.array(z.string()),
              rewrittenQueries: z.array(z.string()).optional(),
              dateRanges: z.array(z.object({ text: z.string(), start: z.string(), end: z.string() })).optional(),
            }),
          },
        },
      },
      async (request) => {
        const userId = userKeyOf(request);
        const b = request.body;
        const result = await recall(deps, userId, b.query, {
          topK: b.topK,
          tokenBudget: b.tokenBudget,
          types: b.types,
          recentMessages: b.recentMessages,
          now: b.now ? new Date(b.now) : undefined,
          timeZone: b.timeZone,
          // Without a zone from the request or the user's settings, the offset `now` was written with is the best hint.
          fallbackTimeZone: b.now ? zoneFromIsoOffset(b.now) : undefined,
          routes: b.routes,
          rewrite: b.rewrite,
        });
        if (result.memories.length > 0) hooks.afterRecall?.(userId, result.memories.map((m) => m.id), b.now ? new Date(b.now) : new Date());
        return { ...result, memories: result.memories.map((m) => ({ ...m, source: m.source as Record<string, unknown> })) };
      },
    );
  };
