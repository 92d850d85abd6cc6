import { z } from 'zod';
import { MEMORY_TYPES, type MemoryType } from '../core/types';

/**
 * The only module that reads `process.env`. Everything is parsed once at start; a bad value fails
 * fast with the variable's name, so a misconfigured deployment never half-starts.
 */

const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const optionalUrl = z.preprocess(blankToUndefined, z.string().trim().url().optional());
const optionalString = z.preprocess(blankToUndefined, z.string().trim().optional());
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

const tenantsSchema = z
  .string()
  .transform((raw, ctx) => {
    // Format: "tenant:key,tenant2:key2" — one API key per entry; a tenant may have several keys.
    const entries = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const keys: { tenantId: string; key: string }[] = [];
    for (const entry of entries) {
      const idx = entry.indexOf(':');
      const tenantId = entry.slice(0, idx);
      const key = entry.slice(idx + 1);
      if (idx <= 0 || key.length < 8 || !/^[A-Za-z0-9_.-]{1,64}$/.test(tenantId)) {
        ctx.addIssue({
          code: 'custom',
          message: `expected "tenant:key" entries (key ≥ 8 characters), got "${entry.slice(0, 20)}…"`,
        });
        return z.NEVER;
      }
      keys.push({ tenantId, key });
    }
    if (keys.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'at least one "tenant:key" entry is required' });
      return z.NEVER;
    }
    return keys;
  });

/** "type:days" pairs, comma-separated; "none" means the type never expires (MEMORY_TTL_DAYS). */
const ttlSchema = z.string().transform((raw, ctx) => {
  const ttl: Partial<Record<MemoryType, number | null>> = {};
  for (const entry of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [type, days] = entry.split(':').map((s) => s.trim());
    const known = (MEMORY_TYPES as readonly string[]).includes(type ?? '');
    const value = days === 'none' ? null : Number(days);
    if (!known || (value !== null && !(Number.isInteger(value) && value > 0))) {
      ctx.addIssue({ code: 'custom', message: `expected "type:days" or "type:none" with a memory type and a positive whole number of days, got "${entry.slice(0, 40)}"` });
      return z.NEVER;
    }
    ttl[type as MemoryType] = value;
  }
  return ttl;
});

const llmSchema = z.discriminatedUnion('provider', [
  z.object({ provider: z.literal('none') }),
  z.object({
    provider: z.literal('openai-compatible'),
    baseUrl: z.string().url(),
    apiKey: z.string().default('not-needed'),
    model: z.string().min(1),
  }),
  z.object({
    provider: z.literal('anthropic'),
    apiKey: z.string().min(1),
    model: z.string().min(1),
  }),
]);

const embedderSchema = z.discriminatedUnion('provider', [
  z.object({
    provider: z.literal('openai-compatible'),
    /** Unset: the local stack starts the bundled offline multilingual-e5-small server. */
    baseUrl: z.string().url().optional(),
    apiKey: z.string().default('not-needed'),
    model: z.string().min(1),
    dimensions: positiveInt,
  }),
  z.object({ provider: z.literal('hashing'), dimensions: positiveInt }),
]);

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: port.default(8080),
  DATA_DIR: z.string().default('.data'),
  STACK_DIR: z.string().default('.stack'),
  API_KEYS: tenantsSchema.prefault('dev:dev-key-change-me'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/).default('jarvis-memory'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('jarvis-memory'),
  TEMPORAL_RETENTION_DAYS: positiveInt.default(30),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),

  DATABASE_URL: optionalString,
  PG_BIN_DIR: optionalString,
  PG_PORT: port.default(5433),

  CHROMA_URL: optionalUrl,
  CHROMA_PORT: port.default(8000),
  CHROMA_COLLECTION: z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]{1,62}$/).default('jarvis_memories'),

  EMBEDDINGS_PROVIDER: z.enum(['openai-compatible', 'hashing']).default('openai-compatible'),
  EMBEDDINGS_URL: optionalUrl,
  EMBEDDINGS_API_KEY: optionalString,
  EMBEDDINGS_MODEL: z.string().default('multilingual-e5-small-q4'),
  EMBEDDINGS_DIMENSIONS: positiveInt.default(384),
  EMBEDDINGS_PORT: port.default(8089),

  LLM_PROVIDER: z.enum(['none', 'openai-compatible', 'anthropic']).default('none'),
  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: optionalString,
  LLM_MODEL: optionalString,

  CONVERSATION_IDLE_SECONDS: positiveInt.default(1800),
  RECALL_TIMEOUT_MS: positiveInt.default(5000),
  RECALL_TOKEN_BUDGET: positiveInt.default(800),
  RECALL_QUERY_REWRITE: z.enum(['off', 'referential', 'always']).default('off'),
  RECALL_REWRITE_TIMEOUT_MS: positiveInt.default(2000),
  DEDUP_SIMILARITY: z.coerce.number().min(0).max(1).default(0.93),
  CONFLICT_RESOLVER: z.enum(['auto', 'rules']).default('auto'),
  MAX_MESSAGE_CHARS: positiveInt.default(8000),
  MAX_MESSAGES_PER_CONVERSATION: positiveInt.default(10000),
  SCHEDULE_TIMEZONE: z.string().default('UTC'),
  // Proactive memory (reminders, digests, nudges)
  DIGEST_DEFAULT_TIME: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM').default('22:00'),
  NUDGE_INTERVAL_MINUTES: positiveInt.default(60),
  REMINDER_ACK_SECONDS: positiveInt.default(86400),
  REMINDER_ACCEPT_TIMEOUT_MS: positiveInt.default(5000),
  PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE: z.enum(['true', 'false']).default('true'),
  // Memory lifecycle (forgetting curve, capacity, expiry sweep)
  MAX_ACTIVE_MEMORIES_PER_USER: positiveInt.default(5000),
  MEMORY_TTL_DAYS: ttlSchema.prefault('event:30'),
  SWEEP_BATCH_SIZE: z.coerce.number().int().min(100).max(50_000).default(5000),
});

export type Env = z.infer<typeof envSchema>;

export interface AppConfig {
  env: Env['NODE_ENV'];
  http: { host: string; port: number };
  dataDir: string;
  stackDir: string;
  tenants: { tenantId: string; key: string }[];
  logLevel: Env['LOG_LEVEL'];
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    retentionDays: number;
    cliPath?: string;
    port: number;
    uiPort: number;
  };
  postgres: { url?: string; binDir?: string; port: number };
  chroma: { url?: string; port: number; collection: string };
  embedder: z.infer<typeof embedderSchema> & { localPort: number };
  llm: z.infer<typeof llmSchema>;
  extraction: {
    /** `llm` when a model is configured and CONFLICT_RESOLVER=auto; else `rules`. */
    conflictResolver: 'llm' | 'rules';
    idleSeconds: number;
    dedupSimilarity: number;
    maxMessageChars: number;
    maxMessagesPerConversation: number;
  };
  /** `queryRewrite`: when recall asks the LLM for extra queries (off the default hot path). */
  recall: { timeoutMs: number; tokenBudget: number; queryRewrite: 'off' | 'referential' | 'always'; rewriteTimeoutMs: number };
  scheduleTimezone: string;
  /** Reminders, daily digests and nudges (issue #7). */
  /** `schedulesOnFirstMessage`: a user's digest and nudge schedules start with their first message (else with their first reminder or settings change). */
  proactive: {
    digestDefaultTime: string;
    nudgeIntervalMinutes: number;
    reminderAckSeconds: number;
    /** How long snooze/dismiss/cancel/reschedule wait for the reminders row to show the workflow's state before answering 202. */
    reminderAcceptTimeoutMs: number;
    schedulesOnFirstMessage: boolean;
  };
  /** Forgetting: capacity cap, lifetimes per type, and the sweep's page size. */
  lifecycle: { maxActivePerUser: number; ttlDays: Partial<Record<MemoryType, number | null>>; sweepBatchSize: number };
}

/** Thrown at start when the environment is invalid; names every offending variable. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid configuration: ${problems.map((p) => `${p.variable}: ${p.message}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

function fail(variable: string, message: string): never {
  throw new ConfigError([{ variable, message }]);
}

/** Parses an environment (defaults to `process.env`) into the typed application config. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? 'environment'),
        message: issue.message,
      })),
    );
  }
  const e = parsed.data;

  const llmInput =
    e.LLM_PROVIDER === 'openai-compatible'
      ? { provider: e.LLM_PROVIDER, baseUrl: e.LLM_BASE_URL, apiKey: e.LLM_API_KEY, model: e.LLM_MODEL }
      : e.LLM_PROVIDER === 'anthropic'
        ? { provider: e.LLM_PROVIDER, apiKey: e.LLM_API_KEY, model: e.LLM_MODEL }
        : { provider: 'none' as const };
  const llm = llmSchema.safeParse(llmInput);
  if (!llm.success) {
    const field = String(llm.error.issues[0]?.path[0] ?? 'provider');
    const variable = { baseUrl: 'LLM_BASE_URL', apiKey: 'LLM_API_KEY', model: 'LLM_MODEL' }[field] ?? 'LLM_PROVIDER';
    fail(variable, `required when LLM_PROVIDER=${e.LLM_PROVIDER}`);
  }

  const embedder = embedderSchema.parse(
    e.EMBEDDINGS_PROVIDER === 'hashing'
      ? { provider: 'hashing' as const, dimensions: e.EMBEDDINGS_DIMENSIONS }
      : {
          provider: 'openai-compatible' as const,
          baseUrl: e.EMBEDDINGS_URL,
          apiKey: e.EMBEDDINGS_API_KEY ?? 'not-needed',
          model: e.EMBEDDINGS_MODEL,
          dimensions: e.EMBEDDINGS_DIMENSIONS,
        },
  );

  // A rewrite policy without a model would silently do nothing on every message: refuse to start.
  if (e.RECALL_QUERY_REWRITE !== 'off' && e.LLM_PROVIDER === 'none') fail('RECALL_QUERY_REWRITE', `"${e.RECALL_QUERY_REWRITE}" needs an LLM (set LLM_PROVIDER) or "off"`);
  if (!isValidTimezone(e.SCHEDULE_TIMEZONE)) fail('SCHEDULE_TIMEZONE', `unknown IANA timezone "${e.SCHEDULE_TIMEZONE}"`);

  return {
    env: e.NODE_ENV,
    http: { host: e.HOST, port: e.PORT },
    dataDir: e.DATA_DIR,
    stackDir: e.STACK_DIR,
    tenants: e.API_KEYS,
    logLevel: e.LOG_LEVEL,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      retentionDays: e.TEMPORAL_RETENTION_DAYS,
      cliPath: e.TEMPORAL_CLI_PATH,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
    },
    postgres: { url: e.DATABASE_URL, binDir: e.PG_BIN_DIR, port: e.PG_PORT },
    chroma: { url: e.CHROMA_URL, port: e.CHROMA_PORT, collection: e.CHROMA_COLLECTION },
    embedder: { ...embedder, localPort: e.EMBEDDINGS_PORT },
    llm: llm.data!,
    extraction: {
      conflictResolver: e.CONFLICT_RESOLVER === 'auto' && e.LLM_PROVIDER !== 'none' ? 'llm' : 'rules',
      idleSeconds: e.CONVERSATION_IDLE_SECONDS,
      dedupSimilarity: e.DEDUP_SIMILARITY,
      maxMessageChars: e.MAX_MESSAGE_CHARS,
      maxMessagesPerConversation: e.MAX_MESSAGES_PER_CONVERSATION,
    },
    recall: { timeoutMs: e.RECALL_TIMEOUT_MS, tokenBudget: e.RECALL_TOKEN_BUDGET, queryRewrite: e.RECALL_QUERY_REWRITE, rewriteTimeoutMs: e.RECALL_REWRITE_TIMEOUT_MS },
    scheduleTimezone: e.SCHEDULE_TIMEZONE,
    proactive: {
      digestDefaultTime: e.DIGEST_DEFAULT_TIME,
      nudgeIntervalMinutes: e.NUDGE_INTERVAL_MINUTES,
      reminderAckSeconds: e.REMINDER_ACK_SECONDS,
      reminderAcceptTimeoutMs: e.REMINDER_ACCEPT_TIMEOUT_MS,
      schedulesOnFirstMessage: e.PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE === 'true',
    },
    lifecycle: { maxActivePerUser: e.MAX_ACTIVE_MEMORIES_PER_USER, ttlDays: e.MEMORY_TTL_DAYS, sweepBatchSize: e.SWEEP_BATCH_SIZE },
  };
}

function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    // Intl throws RangeError for unknown zones; that is the answer, not an error to propagate.
    return false;
  }
}
