import { z } from 'zod';
import { zoneFromIsoOffset } from '../core/time/zone-hint';
import { MEMORY_VIAS } from '../core/types';
import type { RecallOptions, RecallResult } from '../recall/recall';
import type { recallBody } from './schemas';

/**
 * What `POST /v1/users/{userId}/recall` answers, and the `recall` activity returns (the Temporal
 * contract, src/client/temporal-contract.ts): one schema, so the two can never drift apart.
 */
export const recallResponse = z.object({
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
      /** How the memory arrived (extraction, api, mcp); memories pending confirmation are never recalled. */
      via: z.enum(MEMORY_VIAS),
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
  /** The persona at the top of `context.system`: the memories it states (not repeated in `memories`), how and when it was built. */
  persona: z.object({ memoryIds: z.array(z.string()), builder: z.string(), builtAt: z.string() }).optional(),
  dateRanges: z.array(z.object({ text: z.string(), start: z.string(), end: z.string() })).optional(),
  followUp: z.object({ memoryId: z.string().nullable() }).optional(),
});
export type RecallResponseBody = z.infer<typeof recallResponse>;

/** The recall service's options for a request body (route and activity alike). */
export function recallOptionsOf(b: z.infer<typeof recallBody>): RecallOptions {
  return {
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
  };
}

/** The service result as the response body: what the wire carries (JSON), unknown fields dropped. */
export function recallResponseOf(result: RecallResult): RecallResponseBody {
  return recallResponse.parse({ ...result, memories: result.memories.map((m) => ({ ...m, source: m.source as Record<string, unknown> })) });
}
