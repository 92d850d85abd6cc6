import { IANAZone } from 'luxon';
import { z } from 'zod';
import { MEMORY_STATUSES, MEMORY_TYPES } from '../core/types';

/**
 * User ids come from client systems: allow the usual id characters (including ":" and "@" for
 * "tenant:user" or e-mail-like ids) but nothing that could confuse a path, a log line or a
 * Temporal workflow id.
 */
export const userIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/, 'userId may contain letters, digits and . _ : @ - only');
export const conversationIdSchema = userIdSchema.describe('conversation id');

/** Rejects text a person cannot have typed: NUL and other C0 controls (tabs and newlines are fine). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const LONE_SURROGATE = /\p{Cs}/u;
export const textSchema = (max: number) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !CONTROL_CHARS.test(s), 'must not contain control characters')
    .refine((s) => !LONE_SURROGATE.test(s), 'must be valid Unicode (no lone surrogates)');

export const userParams = z.object({ userId: userIdSchema });
export const memoryParams = z.object({ userId: userIdSchema, id: z.string().uuid() });
export const conversationParams = z.object({ userId: userIdSchema, conversationId: conversationIdSchema });

export const isoDate = z.string().datetime({ offset: true });

/** An IANA time zone ("Asia/Shanghai"); dates in queries and in the context are read in it. */
export const ianaZone = z
  .string()
  .max(64)
  .refine((zone) => IANAZone.isValidZone(zone), 'must be an IANA time zone such as "Asia/Shanghai" or "UTC"');

export const createMemoryBody = z.object({
  text: textSchema(4000),
  type: z.enum(MEMORY_TYPES),
  scope: z.enum(['global', 'task']).optional(),
  confidence: z.number().min(0).max(1).optional(),
  importance: z.number().min(0).max(1).optional(),
  keywords: z.array(z.string().max(64)).max(32).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  expiresAt: isoDate.optional(),
  at: isoDate.optional(),
  /** Client-chosen id that makes retries of this request idempotent. */
  requestId: z.string().min(1).max(128).optional(),
});

export const listMemoriesQuery = z.object({
  status: z.enum(MEMORY_STATUSES).optional(),
  type: z.enum(MEMORY_TYPES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const recallBody = z.object({
  query: z.string().max(20_000),
  topK: z.number().int().min(1).max(50).optional(),
  tokenBudget: z.number().int().min(16).max(32_000).optional(),
  types: z.array(z.enum(MEMORY_TYPES)).optional(),
  recentMessages: z.array(z.string().max(8000)).max(20).optional(),
  now: isoDate.optional(),
  timeZone: ianaZone.optional(),
  routes: z.array(z.enum(['ann', 'bm25', 'recent', 'important', 'type', 'time', 'exchanges'])).optional(),
  /** LLM query rewrite for this message (true/false); absent: the server's RECALL_QUERY_REWRITE policy. */
  rewrite: z.boolean().optional(),
});

export const memoryView = z.object({
  id: z.string(),
  text: z.string(),
  type: z.string(),
  status: z.string(),
  scope: z.string(),
  confidence: z.number(),
  importance: z.number(),
  importanceLevel: z.string(),
  frequencyCount: z.number(),
  decayScore: z.number(),
  emotionTags: z.array(z.string()),
  keywords: z.array(z.string()),
  source: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastRecalledAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
  supersedes: z.string().nullable(),
  supersededBy: z.string().nullable(),
});

export const errorBody = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) });
