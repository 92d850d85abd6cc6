import { z } from 'zod';
import { ALL_ROUTES } from '../core/recall/routes';
import { MEMORY_STATUSES, MEMORY_TYPES, MEMORY_VIAS, MemoryVia } from '../core/types';
import { MAX_MESSAGE_ID_LENGTH, messageIdProblem } from '../core/conversation/message-ids';
import { isValidTimeZone } from '../core/time/zones';

/**
 * Every id a client chooses (user, conversation, request) is 1–128 ASCII letters,
 * digits and `. _ @ -`, starting with a letter or digit: nothing that could end or split a path
 * segment, a log line, a Temporal workflow id (`conversation:<user>:<conversation>` stays
 * unambiguous without ':') or a Chroma collection name, and no look-alike Unicode.
 */
export const MAX_ID_LENGTH = 128;
const SAFE_ID = /^[A-Z0-9][\w.@-]*$/i;
export const safeIdSchema = (name: string) =>
  z
    .string()
    .min(1, `${name} must not be empty`)
    .max(MAX_ID_LENGTH, `${name} must be at most ${MAX_ID_LENGTH} characters`)
    .regex(SAFE_ID, `${name} may contain ASCII letters, digits and . _ @ - only, and must start with a letter or digit`);
export const userIdSchema = safeIdSchema('userId');
export const conversationIdSchema = safeIdSchema('conversationId');
/**
 * Message ids are the chat platform's (Matrix `$abc:server.org`, `conv:42:msg:7`): any printable
 * id up to a bound, stored and returned as given; keys built from them encode them
 * (src/core/conversation/message-ids.ts).
 */
export const messageIdSchema = z
  .string()
  .min(1, 'message id must not be empty')
  .max(MAX_MESSAGE_ID_LENGTH, `message id must be at most ${MAX_MESSAGE_ID_LENGTH} characters`)
  .superRefine((id, ctx) => {
    const problem = messageIdProblem(id);
    if (problem) ctx.addIssue({ code: 'custom', message: `message id ${problem}` });
  });
export const requestIdSchema = safeIdSchema('requestId');

/** Rejects text a person cannot have typed: NUL and other C0 controls (tabs and newlines are fine). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARS = /[\u0000-\u0008\v\f\u000E-\u001F\u007F]/;
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

/** How far ahead of this server's clock a client may say something was said: clock skew, not the future. */
export const SAID_AT_MAX_SKEW_MS = 5 * 60_000;

/**
 * When something was said or learnt (a memory's or a message's `at`): a time that has happened,
 * give or take clock skew, and not before 1970. A memory dated 9999 would rank first by recency
 * and never decay, and a message dated then would sit on a day no question reaches.
 */
export const saidAt = isoDate.refine((value) => {
  const t = Date.parse(value);
  return t >= 0 && t <= Date.now() + SAID_AT_MAX_SKEW_MS;
}, 'must be a time that has happened (at most 5 minutes ahead of the server clock), not before 1970');

/** When a memory stops holding: later than now, since a memory stored already expired would never be recalled. */
export const futureExpiry = isoDate.refine((value) => Date.parse(value) > Date.now(), 'must be in the future');

/** An IANA time zone ("Asia/Shanghai"); dates in queries and in the context are read in it. */
export const ianaZone = z
  .string()
  .max(64)
  .refine((zone) => isValidTimeZone(zone), 'must be an IANA time zone such as "Asia/Shanghai" or "UTC"');

/**
 * Bounds on free-form JSON a client may attach (memory `metadata`): it is stored in PostgreSQL
 * jsonb, carried in Temporal payloads and returned with every view of the memory, so its size
 * must not be the client's choice.
 */
export const JSON_BOUNDS = {
  /** The object itself is depth 1; `{a: {b: [1]}}` is depth 3. */
  maxDepth: 4,
  maxKeysPerObject: 32,
  maxArrayItems: 64,
  maxKeyLength: 64,
  maxStringLength: 1024,
  /** UTF-8 bytes of the value as JSON. */
  maxSerializedBytes: 8 * 1024,
} as const;

type JsonIssue = { path: (string | number)[]; message: string };

/** The first bound a JSON value breaks, walking it depth first; undefined when it keeps them all. */
export function jsonBoundsIssue(value: unknown, bounds = JSON_BOUNDS): JsonIssue | undefined {
  const walk = (v: unknown, path: (string | number)[], depth: number): JsonIssue | undefined => {
    if (typeof v === 'string') {
      if (v.length > bounds.maxStringLength) return { path, message: `strings may be at most ${bounds.maxStringLength} characters` };
      if (CONTROL_CHARS.test(v) || LONE_SURROGATE.test(v)) return { path, message: 'strings must be valid Unicode without control characters' };
      return undefined;
    }
    if (v === null || typeof v === 'number' || typeof v === 'boolean') return undefined;
    if (typeof v !== 'object') return { path, message: 'must be JSON' };
    if (depth > bounds.maxDepth) return { path, message: `nesting may be at most ${bounds.maxDepth} levels deep` };
    if (Array.isArray(v)) {
      if (v.length > bounds.maxArrayItems) return { path, message: `arrays may hold at most ${bounds.maxArrayItems} items` };
      for (let i = 0; i < v.length; i++) {
        const issue = walk(v[i], [...path, i], depth + 1);
        if (issue) return issue;
      }
      return undefined;
    }
    const entries = Object.entries(v);
    if (entries.length > bounds.maxKeysPerObject) return { path, message: `objects may have at most ${bounds.maxKeysPerObject} keys` };
    for (const [key, child] of entries) {
      if (key.length === 0 || key.length > bounds.maxKeyLength) return { path: [...path, key], message: `keys must be 1–${bounds.maxKeyLength} characters` };
      if (CONTROL_CHARS.test(key) || LONE_SURROGATE.test(key)) return { path: [...path, key], message: 'keys must be valid Unicode without control characters' };
      const issue = walk(child, [...path, key], depth + 1);
      if (issue) return issue;
    }
    return undefined;
  };
  const issue = walk(value, [], 1);
  if (issue) return issue;
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > bounds.maxSerializedBytes) return { path: [], message: `must be at most ${bounds.maxSerializedBytes} bytes as JSON` };
  return undefined;
}

/** A free-form JSON object held to JSON_BOUNDS; a break is a 400 naming where it is. */
export const boundedJsonObject = (name: string) =>
  z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const issue = jsonBoundsIssue(value);
    if (issue) ctx.addIssue({ code: 'custom', path: issue.path, message: `${name}: ${issue.message}` });
  });

// Request bodies refuse keys they do not know (400 naming the key) rather than drop them: a
// misspelt option ("top_k", "expires_at") would otherwise be ignored under a 2xx.
export const createMemoryBody = z.strictObject({
  text: textSchema(4000),
  /** Absent: the extractor infers type, scope, importance and keywords from the text, as for a message of the user. */
  type: z.enum(MEMORY_TYPES).optional(),
  scope: z.enum(['global', 'task']).optional(),
  confidence: z.number().min(0).max(1).optional(),
  importance: z.number().min(0).max(1).optional(),
  keywords: z.array(z.string().max(64)).max(32).optional(),
  metadata: boundedJsonObject('metadata').optional(),
  expiresAt: futureExpiry.optional(),
  at: saidAt.optional(),
  /** Client-chosen id that makes retries of this request idempotent. */
  requestId: requestIdSchema.optional(),
  /** Who is writing: `api` (default) or `mcp` (an agent's tool call, e.g. the stdio MCP server). Either is a direct write; neither can claim extraction. */
  via: z.enum([MemoryVia.api, MemoryVia.mcp]).optional(),
});

export const listMemoriesQuery = z.object({
  status: z.enum(MEMORY_STATUSES).optional(),
  type: z.enum(MEMORY_TYPES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const recallBody = z.strictObject({
  query: z.string().max(20_000),
  topK: z.number().int().min(1).max(50).optional(),
  tokenBudget: z.number().int().min(16).max(32_000).optional(),
  // Bounded like every other list a client sends: 100,000 "fact"s fit the 1 MB body and went
  // into every route's query as one array parameter.
  types: z.array(z.enum(MEMORY_TYPES)).max(MEMORY_TYPES.length).optional(),
  recentMessages: z.array(z.string().max(8000)).max(20).optional(),
  now: isoDate.optional(),
  timeZone: ianaZone.optional(),
  routes: z.array(z.enum(ALL_ROUTES)).max(ALL_ROUTES.length).optional(),
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
  /** How it arrived: extraction (the user's words), api (a tenant-key write), mcp (an agent's memory_add). */
  via: z.enum(MEMORY_VIAS),
  /** A directly written instruction waiting for the user's confirmation (POST …/memories/{id}/confirm); not injected until then. */
  pending: z.boolean(),
});

export const errorBody = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) });
