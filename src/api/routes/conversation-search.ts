import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { zoneFromIsoOffset } from '../../core/time/zone-hint';
import { searchConversations } from '../../recall/conversation-search-use-case';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { ianaZone, isoDate, userParams } from '../schemas';

const line = z.object({ id: z.string(), text: z.string(), at: z.string() });

/** L0 conversation search: exchanges (user line + assistant reply) with their dates. */
export const conversationSearchRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/users/:userId/conversations/search',
      {
        config: { readOnly: true },
        schema: {
          summary: 'Search the raw conversations (L0): exchanges by keywords, by the dates the query names, and through episodes',
          params: userParams,
          body: z.strictObject({
            query: z.string().trim().min(1, 'must not be empty').max(2000),
            topK: z.number().int().min(1).max(50).optional(),
            maxLines: z
              .number()
              .int()
              .min(1)
              .max(100)
              .optional()
              .describe(
                'Budget in lines instead of topK exchanges: each exchange shows only the lines a search route found (both when both were), until this many lines; topK is then ignored',
              ),
            now: isoDate.optional(),
            timeZone: ianaZone.optional(),
          }),
          response: {
            200: z.object({
              exchanges: z.array(
                z.object({
                  conversationId: z.string(),
                  date: z.string(),
                  messageIds: z.array(z.string()),
                  user: line.optional(),
                  assistant: line.optional(),
                  score: z.number(),
                  routes: z.array(z.string()),
                  inRange: z.boolean(),
                }),
              ),
              dateRanges: z.array(z.object({ text: z.string(), start: z.string(), end: z.string() })),
              timeZone: z.string(),
              routes: z.array(z.object({ route: z.string(), ok: z.boolean(), ms: z.number(), hits: z.number() })),
              error: z.object({ code: z.string(), message: z.string(), routes: z.array(z.string()) }).optional(),
            }),
          },
        },
      },
      async (request) => {
        const b = request.body;
        return searchConversations(deps, userKeyOf(request), b.query, {
          topK: b.topK,
          maxLines: b.maxLines,
          now: b.now ? new Date(b.now) : undefined,
          timeZone: b.timeZone,
          fallbackTimeZone: b.now ? zoneFromIsoOffset(b.now) : undefined,
        });
      },
    );
  };
