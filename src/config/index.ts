import { z } from 'zod';
import type { AppConfig, ProxyConfig, ProxyPolicy } from './types';
import { chromaAccess, chromaAccessEnv, temporalConnectionEnv, temporalConnectionSettings } from './connections';
import { blankToUndefined, budget, ConfigError, DATABASE_TIMEOUT_DEFAULTS, DEV_API_KEY, DEV_CODEC_AUTH_TOKEN, DEV_PAYLOAD_MASTER_KEY, DEV_SECRET_KEY, embedderSchema, fail, isValidTimezone, llmSchema, LOG_LEVELS, MIN_PRODUCTION_KEY_BYTES, modelList, NODE_ENVS, optionalString, optionalUrl, parseKeyMaterial, port, positiveInt, retentionDays, tenantPolicySchema, tenantsSchema, ttlSchema, WILDCARD_HOSTS } from './values';

export type { AppConfig, ProxyConfig, ProxyPolicy, RateLimitBudget, RateLimitConfig, ReliabilityConfig, RetentionDays } from './types';
export { ConfigError, DEV_API_KEY, MIN_PRODUCTION_KEY_BYTES, parseKeyMaterial } from './values';
export { chromaHeaders, describeTemporalConnection, Secret, temporalConnectOptions, type ChromaAccess, type TemporalConnectionSettings, type TemporalConnectOptions } from './connections';

/**
 * The only module that reads `process.env`. Everything is parsed once at start; a bad value fails
 * fast with the variable's name, so a misconfigured deployment never half-starts.
 */

export const envSchema = z.object({
  NODE_ENV: z.enum(NODE_ENVS).default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: port.default(8080),
  DATA_DIR: z.string().default('.data'),
  STACK_DIR: z.string().default('.stack'),
  API_KEYS: tenantsSchema.prefault(`dev:${DEV_API_KEY}`),
  SECRET_KEY: optionalString,
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  /** Unset: pretty outside production, json in production (see loadConfig). */
  LOG_FORMAT: z.preprocess(blankToUndefined, z.enum(['pretty', 'json']).optional()),

  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/).default('jarvis-memory'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('jarvis-memory'),
  TEMPORAL_RETENTION_DAYS: positiveInt.default(30),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  // A Temporal of one's own or Temporal Cloud (TEMPORAL_ADDRESS): TLS, mTLS, API key (connections.ts).
  ...temporalConnectionEnv,

  DATABASE_URL: optionalString,
  PG_BIN_DIR: optionalString,
  PG_BINARIES: z.enum(['auto', 'system', 'embedded']).default('auto'),
  PG_PORT: port.default(5433),
  DATABASE_QUERY_TIMEOUT_MS: positiveInt.min(100).max(600_000).default(DATABASE_TIMEOUT_DEFAULTS.queryTimeoutMs),
  DATABASE_LONG_QUERY_TIMEOUT_MS: positiveInt.min(100).max(3_600_000).default(DATABASE_TIMEOUT_DEFAULTS.longQueryTimeoutMs),

  CHROMA_URL: optionalUrl,
  CHROMA_PORT: port.default(8000),
  CHROMA_COLLECTION: z.string().regex(/^[a-z0-9][\w.-]{1,62}$/i).default('jarvis_memories'),
  // A Chroma of one's own or Chroma Cloud (CHROMA_URL): token, tenant, database (connections.ts).
  ...chromaAccessEnv,

  EMBEDDINGS_PROVIDER: z.enum(['openai-compatible', 'hashing']).default('openai-compatible'),
  EMBEDDINGS_URL: optionalUrl,
  EMBEDDINGS_API_KEY: optionalString,
  EMBEDDINGS_MODEL: z.string().default('multilingual-e5-small-q4'),
  EMBEDDINGS_DIMENSIONS: positiveInt.default(384),
  EMBEDDINGS_PORT: port.default(8089),
  EMBEDDINGS_CONCURRENCY: positiveInt.default(2),
  EMBEDDINGS_TIMEOUT_MS: positiveInt.default(30_000),

  LLM_PROVIDER: z.enum(['none', 'openai-compatible', 'anthropic']).default('none'),
  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: optionalString,
  LLM_MODEL: optionalString,

  CONVERSATION_IDLE_SECONDS: positiveInt.default(1800),
  RECALL_TIMEOUT_MS: positiveInt.default(5000),
  RECALL_TOKEN_BUDGET: positiveInt.default(800),
  RECALL_QUERY_REWRITE: z.enum(['off', 'referential', 'always']).default('off'),
  RECALL_REWRITE_TIMEOUT_MS: positiveInt.default(2000),
  RECALL_PERSONA_SHARE: z.coerce.number().min(0).max(0.5).default(0.15),
  RECALL_SCENES_SHARE: z.coerce.number().min(0).max(0.5).default(0.1),
  RECALL_WORKING_SET_MEMORIES: z.coerce.number().int().min(0).max(10_000_000).default(200_000),
  RECALL_EXCHANGE_MIN_SIMILARITY: z.coerce.number().min(0).max(1).default(0.805),
  RECALL_EXCHANGE_MIN_SIMILARITY_CJK: z.coerce.number().min(0).max(1).default(0.855),
  PERSONA_DEBOUNCE_SECONDS: z.coerce.number().int().min(0).max(3600).default(5),
  PERSONA_BUILDER: z.enum(['auto', 'template']).default('auto'),
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
  PAGE_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  PAGE_CODE_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(300),
  // Rate limits (requests per RATE_LIMIT_WINDOW_SECONDS) and request body sizes
  RATE_LIMIT_WINDOW_SECONDS: positiveInt.max(3600).default(60),
  RATE_LIMIT_RECALL_PER_USER: budget.default(120),
  RATE_LIMIT_RECALL_PER_KEY: budget.default(6000),
  RATE_LIMIT_WRITES_PER_USER: budget.default(240),
  RATE_LIMIT_WRITES_PER_KEY: budget.default(12_000),
  RATE_LIMIT_LLM_PER_USER: budget.default(60),
  RATE_LIMIT_LLM_PER_KEY: budget.default(1200),
  RATE_LIMIT_NEW_USERS_PER_TENANT: budget.default(120),
  MAX_MESSAGES_BODY_BYTES: z.coerce.number().int().min(64 * 1024).max(64 * 1024 * 1024).default(8 * 1024 * 1024),
  // Encrypted Temporal payloads: Temporal keeps workflow inputs and results, so they are sealed with
  // per-user data keys (wrapped by a master key) that a purge can destroy.
  PAYLOAD_ENCRYPTION: z.enum(['on', 'off']).default('on'),
  PAYLOAD_MASTER_KEY: optionalString,
  PAYLOAD_MASTER_KEYS_OLD: optionalString,
  PAYLOAD_KEY_CACHE_SECONDS: positiveInt.max(3600).default(30),
  CODEC_AUTH_TOKEN: optionalString,
  CODEC_CORS_ORIGINS: optionalString,
  // DNS rebinding and cross-site calls to /mcp (the MCP Streamable HTTP transport asks servers to check Origin).
  MCP_ALLOWED_ORIGINS: optionalString,
  MCP_ALLOWED_HOSTS: optionalString,
  // Retention: raw conversations and what is derived from them are not kept for ever; the daily sweep
  // deletes rows older than this many days; 0 or "none" keeps them.
  RETENTION_MESSAGES_DAYS: retentionDays(365),
  RETENTION_EPISODES_DAYS: retentionDays(365),
  RETENTION_NOTIFICATIONS_DAYS: retentionDays(90),
  RETENTION_DIGESTS_DAYS: retentionDays(90),
  // Reliability, so nothing stored is lost while Temporal or Chroma is down: reconcilers, outbox retries, bounded waits on Temporal
  EXTRACTION_RECONCILE_SECONDS: positiveInt.min(10).max(3600).default(120),
  // The rule work of extraction runs on worker threads with a time limit per message; a message that overruns it, or fails this many times, is quarantined
  RULE_POOL_THREADS: positiveInt.max(32).default(2),
  EXTRACTION_MESSAGE_TIMEOUT_MS: positiveInt.min(100).max(60_000).default(5000),
  EXTRACTION_QUARANTINE_AFTER_ERRORS: positiveInt.max(100).default(2),
  REMINDER_RECONCILE_SECONDS: positiveInt.min(10).max(3600).default(60),
  OUTBOX_DRAIN_SECONDS: positiveInt.min(10).max(3600).default(60),
  // The exchange indexer: every this many seconds, new messages are embedded as exchanges (dense conversation search)
  EXCHANGE_INDEX_SECONDS: positiveInt.min(5).max(3600).default(30),
  OUTBOX_MAX_ATTEMPTS: positiveInt.max(100).default(10),
  OUTBOX_RETRY_BASE_SECONDS: positiveInt.default(30),
  OUTBOX_RETRY_MAX_SECONDS: positiveInt.default(3600),
  WORKFLOW_WAIT_TIMEOUT_MS: positiveInt.default(120_000),
  TEMPORAL_CALL_TIMEOUT_MS: positiveInt.default(5000),
  // OpenAI-compatible memory proxy (POST /proxy/v1/chat/completions): where answers come from
  UPSTREAM_BASE_URL: optionalUrl,
  UPSTREAM_API_KEY: optionalString,
  PROXY_RECALL_TIMEOUT_MS: positiveInt.max(60_000).default(1500),
  // Bounded resources per caller: exports, event streams, the proxy's upstream calls
  EXPORT_CONCURRENCY_PER_TENANT: positiveInt.max(100).default(2),
  EXPORT_SNAPSHOTS_AT_ONCE: positiveInt.max(8).default(2),
  EXPORT_STATEMENT_TIMEOUT_MS: positiveInt.max(600_000).default(30_000),
  EXPORT_SNAPSHOT_TIMEOUT_MS: positiveInt.max(3_600_000).default(120_000),
  RATE_LIMIT_EXPORT_UNITS_PER_USER: budget.default(400),
  RATE_LIMIT_EXPORT_UNITS_PER_KEY: budget.default(4000),
  SSE_MAX_STREAMS_PER_USER: positiveInt.max(1000).default(4),
  SSE_MAX_STREAMS_PER_KEY: positiveInt.max(100_000).default(1000),
  // Observability (docs/operations.md#metrics-and-traces): /metrics is on behind the operator token;
  // the Temporal SDK's own worker metrics get a port of their own, traces go out over OTLP — both off unless set.
  TEMPORAL_METRICS_ADDRESS: z.preprocess(blankToUndefined, z.string().trim().regex(/^[\w.-]+:\d{1,5}$/, 'expected host:port').optional()),
  OTEL_TRACES: z.enum(['off', 'otlp']).default('off'),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  PROXY_ALLOWED_MODELS: optionalString,
  PROXY_MAX_N: positiveInt.max(128).default(1),
  PROXY_MAX_TOKENS: positiveInt.max(1_000_000).default(4096),
  PROXY_ALLOW_TOOLS: z.enum(['true', 'false']).default('false'),
  PROXY_TENANT_POLICIES: optionalString,
  PROXY_TOKENS_PER_UNIT: positiveInt.default(4096),
  PROXY_UPSTREAM_TIMEOUT_MS: positiveInt.max(600_000).default(120_000),
  // Process start (docs/operations.md): whether API and worker apply pending migrations themselves.
  // auto: yes in development and tests, no in production (run `npm run migrate` as its own step;
  // a process then refuses to start on a schema behind its code).
  MIGRATE_ON_START: z.enum(['auto', 'true', 'false']).default('auto'),
});

export type Env = z.infer<typeof envSchema>;

function payloadKeys(e: Env): AppConfig['payloads'] {
  const current = e.PAYLOAD_MASTER_KEY ? parseKeyMaterial(e.PAYLOAD_MASTER_KEY) : parseKeyMaterial(DEV_PAYLOAD_MASTER_KEY);
  if (!current) fail('PAYLOAD_MASTER_KEY', 'expected 32 bytes as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)');
  const oldMasterKeys = (e.PAYLOAD_MASTER_KEYS_OLD ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((k, i) => parseKeyMaterial(k) ?? fail('PAYLOAD_MASTER_KEYS_OLD', `entry ${i + 1} is not 32 bytes of hex or base64`));
  if (e.PAYLOAD_ENCRYPTION === 'off' && e.NODE_ENV === 'production') fail('PAYLOAD_ENCRYPTION', '"off" is a development opt-out; production encrypts Temporal payloads');
  return { encryption: e.PAYLOAD_ENCRYPTION === 'on', masterKey: current, oldMasterKeys, masterKeyIsDevDefault: !e.PAYLOAD_MASTER_KEY, keyCacheSeconds: e.PAYLOAD_KEY_CACHE_SECONDS };
}

function codecServer(e: Env): AppConfig['codec'] {
  const authToken = e.CODEC_AUTH_TOKEN ?? (e.NODE_ENV === 'production' ? undefined : DEV_CODEC_AUTH_TOKEN);
  if (authToken !== undefined && authToken.length < 16) fail('CODEC_AUTH_TOKEN', 'must be at least 16 characters');
  const corsOrigins = e.CODEC_CORS_ORIGINS
    ? e.CODEC_CORS_ORIGINS.split(',').map((s) => s.trim().replace(/(?<!\/)\/+$/, '')).filter(Boolean)
    : [`http://127.0.0.1:${e.TEMPORAL_UI_PORT}`, `http://localhost:${e.TEMPORAL_UI_PORT}`];
  for (const origin of corsOrigins) if (!/^https?:\/\/[^/\s]+$/.test(origin)) fail('CODEC_CORS_ORIGINS', `expected origins like http://host:port, got "${origin.slice(0, 40)}"`);
  return { authToken, corsOrigins };
}

function mcpAccess(e: Env): AppConfig['mcp'] {
  const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const allowedOrigins = list(e.MCP_ALLOWED_ORIGINS).map((origin) => {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '') fail('MCP_ALLOWED_ORIGINS', `expected origins like https://host[:port], got "${origin.slice(0, 60)}"`);
    return url.origin;
  });
  const hosts = list(e.MCP_ALLOWED_HOSTS).map((h) => h.toLowerCase());
  for (const h of hosts) if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(h)) fail('MCP_ALLOWED_HOSTS', `expected host names like memory.example.com or memory.example.com:443, got "${h.slice(0, 60)}"`);
  // Default: the loopback names and the listen address (unless it is a wildcard), on any port —
  // a rebinding attacker's Host is their own domain, whatever the port; ports change behind a mapping.
  const listen = e.HOST.trim().toLowerCase();
  const defaults = ['localhost', '127.0.0.1', '[::1]', ...(WILDCARD_HOSTS.has(listen) ? [] : [listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen])];
  return { allowedOrigins, allowedHosts: hosts.length > 0 ? hosts : [...new Set(defaults)] };
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
          concurrency: e.EMBEDDINGS_CONCURRENCY,
          timeoutMs: e.EMBEDDINGS_TIMEOUT_MS,
        },
  );

  // A rewrite policy without a model would silently do nothing on every message: refuse to start.
  if (e.RECALL_QUERY_REWRITE !== 'off' && e.LLM_PROVIDER === 'none') fail('RECALL_QUERY_REWRITE', `"${e.RECALL_QUERY_REWRITE}" needs an LLM (set LLM_PROVIDER) or "off"`);
  if (!isValidTimezone(e.SCHEDULE_TIMEZONE)) fail('SCHEDULE_TIMEZONE', `unknown IANA timezone "${e.SCHEDULE_TIMEZONE}"`);
  if (e.SECRET_KEY !== undefined && Buffer.byteLength(e.SECRET_KEY, 'utf8') < MIN_PRODUCTION_KEY_BYTES) fail('SECRET_KEY', `must be at least ${MIN_PRODUCTION_KEY_BYTES} bytes`);

  if (e.NODE_ENV === 'production') refuseUnsafeProductionConfig(e);

  return {
    env: e.NODE_ENV,
    http: { host: e.HOST, port: e.PORT },
    dataDir: e.DATA_DIR,
    stackDir: e.STACK_DIR,
    tenants: e.API_KEYS,
    secretKey: Buffer.from(e.SECRET_KEY ?? DEV_SECRET_KEY, 'utf8'),
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT ?? (e.NODE_ENV === 'production' ? 'json' : 'pretty'),
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      retentionDays: e.TEMPORAL_RETENTION_DAYS,
      cliPath: e.TEMPORAL_CLI_PATH,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      connection: temporalConnectionSettings(e),
    },
    postgres: { url: e.DATABASE_URL, binDir: e.PG_BIN_DIR, binaries: e.PG_BINARIES, port: e.PG_PORT, queryTimeoutMs: e.DATABASE_QUERY_TIMEOUT_MS, longQueryTimeoutMs: e.DATABASE_LONG_QUERY_TIMEOUT_MS },
    chroma: { url: e.CHROMA_URL, port: e.CHROMA_PORT, collection: e.CHROMA_COLLECTION, access: chromaAccess(e) },
    embedder: { ...embedder, localPort: e.EMBEDDINGS_PORT },
    llm: llm.data!,
    extraction: {
      conflictResolver: e.CONFLICT_RESOLVER === 'auto' && e.LLM_PROVIDER !== 'none' ? 'llm' : 'rules',
      idleSeconds: e.CONVERSATION_IDLE_SECONDS,
      dedupSimilarity: e.DEDUP_SIMILARITY,
      maxMessageChars: e.MAX_MESSAGE_CHARS,
      maxMessagesPerConversation: e.MAX_MESSAGES_PER_CONVERSATION,
      ruleThreads: e.RULE_POOL_THREADS,
      messageTimeoutMs: e.EXTRACTION_MESSAGE_TIMEOUT_MS,
      quarantineAfterErrors: e.EXTRACTION_QUARANTINE_AFTER_ERRORS,
    },
    recall: {
      timeoutMs: e.RECALL_TIMEOUT_MS,
      tokenBudget: e.RECALL_TOKEN_BUDGET,
      queryRewrite: e.RECALL_QUERY_REWRITE,
      rewriteTimeoutMs: e.RECALL_REWRITE_TIMEOUT_MS,
      personaShare: e.RECALL_PERSONA_SHARE,
      workingSetMemories: e.RECALL_WORKING_SET_MEMORIES,
      scenesShare: e.RECALL_SCENES_SHARE,
      exchangeMinSimilarity: { cjk: e.RECALL_EXCHANGE_MIN_SIMILARITY_CJK, other: e.RECALL_EXCHANGE_MIN_SIMILARITY },
      personaDebounceSeconds: e.PERSONA_DEBOUNCE_SECONDS,
      personaBuilder: e.PERSONA_BUILDER === 'auto' && e.LLM_PROVIDER !== 'none' ? 'llm' : 'template',
    },
    scheduleTimezone: e.SCHEDULE_TIMEZONE,
    proactive: {
      digestDefaultTime: e.DIGEST_DEFAULT_TIME,
      nudgeIntervalMinutes: e.NUDGE_INTERVAL_MINUTES,
      reminderAckSeconds: e.REMINDER_ACK_SECONDS,
      reminderAcceptTimeoutMs: e.REMINDER_ACCEPT_TIMEOUT_MS,
      schedulesOnFirstMessage: e.PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE === 'true',
    },
    lifecycle: { maxActivePerUser: e.MAX_ACTIVE_MEMORIES_PER_USER, ttlDays: e.MEMORY_TTL_DAYS, sweepBatchSize: e.SWEEP_BATCH_SIZE },
    page: { sessionTtlSeconds: e.PAGE_TOKEN_TTL_SECONDS, codeTtlSeconds: Math.min(e.PAGE_CODE_TTL_SECONDS, e.PAGE_TOKEN_TTL_SECONDS) },
    rateLimits: {
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      perUser: { recall: e.RATE_LIMIT_RECALL_PER_USER, writes: e.RATE_LIMIT_WRITES_PER_USER, llm: e.RATE_LIMIT_LLM_PER_USER, exports: e.RATE_LIMIT_EXPORT_UNITS_PER_USER },
      perKey: { recall: e.RATE_LIMIT_RECALL_PER_KEY, writes: e.RATE_LIMIT_WRITES_PER_KEY, llm: e.RATE_LIMIT_LLM_PER_KEY, exports: e.RATE_LIMIT_EXPORT_UNITS_PER_KEY },
      newUsersPerTenant: e.RATE_LIMIT_NEW_USERS_PER_TENANT,
    },
    maxMessagesBodyBytes: e.MAX_MESSAGES_BODY_BYTES,
    payloads: payloadKeys(e),
    codec: codecServer(e),
    mcp: mcpAccess(e),
    retention: {
      messages: e.RETENTION_MESSAGES_DAYS,
      episodes: e.RETENTION_EPISODES_DAYS,
      notifications: e.RETENTION_NOTIFICATIONS_DAYS,
      digests: e.RETENTION_DIGESTS_DAYS,
    },
    reliability: {
      reconcileSeconds: e.EXTRACTION_RECONCILE_SECONDS,
      exchangeIndexSeconds: e.EXCHANGE_INDEX_SECONDS,
      reminderReconcileSeconds: e.REMINDER_RECONCILE_SECONDS,
      outbox: {
        drainSeconds: e.OUTBOX_DRAIN_SECONDS,
        maxAttempts: e.OUTBOX_MAX_ATTEMPTS,
        baseDelayMs: e.OUTBOX_RETRY_BASE_SECONDS * 1000,
        maxDelayMs: Math.max(e.OUTBOX_RETRY_MAX_SECONDS, e.OUTBOX_RETRY_BASE_SECONDS) * 1000,
      },
      workflowWaitMs: e.WORKFLOW_WAIT_TIMEOUT_MS,
      temporalCallMs: e.TEMPORAL_CALL_TIMEOUT_MS,
    },
    proxy: proxyConfig(e),
    exports: { concurrencyPerTenant: e.EXPORT_CONCURRENCY_PER_TENANT, snapshotsAtOnce: e.EXPORT_SNAPSHOTS_AT_ONCE, statementTimeoutMs: e.EXPORT_STATEMENT_TIMEOUT_MS, snapshotTimeoutMs: e.EXPORT_SNAPSHOT_TIMEOUT_MS },
    eventStreams: { perUser: e.SSE_MAX_STREAMS_PER_USER, perKey: e.SSE_MAX_STREAMS_PER_KEY },
    migrateOnStart: e.MIGRATE_ON_START === 'auto' ? e.NODE_ENV !== 'production' : e.MIGRATE_ON_START === 'true',
    observability: { temporalMetricsAddress: e.TEMPORAL_METRICS_ADDRESS, traces: e.OTEL_TRACES, otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT },
  };
}

function proxyConfig(e: Env): ProxyConfig {
  const defaultPolicy: ProxyPolicy = { models: modelList(e.PROXY_ALLOWED_MODELS), maxN: e.PROXY_MAX_N, maxTokens: e.PROXY_MAX_TOKENS, tools: e.PROXY_ALLOW_TOOLS === 'true' };
  const tenantPolicies: Record<string, ProxyPolicy> = {};
  if (e.PROXY_TENANT_POLICIES) {
    let raw: unknown;
    try {
      raw = JSON.parse(e.PROXY_TENANT_POLICIES);
    } catch {
      fail('PROXY_TENANT_POLICIES', 'expected a JSON object: {"tenant": {"models": [...], "maxN": 1, "maxTokens": 4096, "tools": false}}');
    }
    const parsed = z.record(z.string().regex(/^[\w.-]{1,64}$/), tenantPolicySchema).safeParse(raw);
    if (!parsed.success) fail('PROXY_TENANT_POLICIES', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    for (const [tenant, p] of Object.entries(parsed.data)) {
      tenantPolicies[tenant] = {
        models: p.models === undefined ? defaultPolicy.models : p.models === '*' ? null : p.models,
        maxN: p.maxN ?? defaultPolicy.maxN,
        maxTokens: p.maxTokens ?? defaultPolicy.maxTokens,
        tools: p.tools ?? defaultPolicy.tools,
      };
    }
  }
  return {
    upstreamBaseUrl: e.UPSTREAM_BASE_URL?.replace(/(?<!\/)\/+$/, ''),
    upstreamApiKey: e.UPSTREAM_API_KEY,
    recallTimeoutMs: e.PROXY_RECALL_TIMEOUT_MS,
    upstreamTimeoutMs: e.PROXY_UPSTREAM_TIMEOUT_MS,
    tokensPerUnit: e.PROXY_TOKENS_PER_UNIT,
    defaultPolicy,
    tenantPolicies,
  };
}

/**
 * A production deployment holds people's most personal data: it does not start with a key anyone
 * can read in this repository, a key short enough to guess, or without its own secret.
 */
function refuseUnsafeProductionConfig(e: Env): void {
  const problems: { variable: string; message: string }[] = [];
  for (const { tenantId, key } of e.API_KEYS) {
    if (key === DEV_API_KEY) problems.push({ variable: 'API_KEYS', message: `tenant "${tenantId}" uses the development key; set a random key` });
    else if (Buffer.byteLength(key, 'utf8') < MIN_PRODUCTION_KEY_BYTES)
      problems.push({ variable: 'API_KEYS', message: `tenant "${tenantId}" has a key shorter than ${MIN_PRODUCTION_KEY_BYTES} bytes` });
  }
  if (!e.SECRET_KEY) problems.push({ variable: 'SECRET_KEY', message: `required in production (at least ${MIN_PRODUCTION_KEY_BYTES} random bytes; it must never change)` });
  else if (e.SECRET_KEY === DEV_SECRET_KEY || Buffer.byteLength(e.SECRET_KEY, 'utf8') < MIN_PRODUCTION_KEY_BYTES)
    problems.push({ variable: 'SECRET_KEY', message: `must be at least ${MIN_PRODUCTION_KEY_BYTES} bytes and not the development secret` });
  // Without its own master key every Temporal history would be encrypted under a key printed in
  // this repository: encryption in name only.
  if (!e.PAYLOAD_MASTER_KEY) problems.push({ variable: 'PAYLOAD_MASTER_KEY', message: 'required in production (32 random bytes, e.g. `openssl rand -base64 32`)' });
  // Set explicitly to the development key (copied from .env.example or a tutorial, in any of its
  // spellings: base64, base64url or hex): as public as leaving it unset. Compared as bytes.
  else if (parseKeyMaterial(e.PAYLOAD_MASTER_KEY)?.equals(parseKeyMaterial(DEV_PAYLOAD_MASTER_KEY)!) === true)
    problems.push({ variable: 'PAYLOAD_MASTER_KEY', message: 'is the public development key; set 32 random bytes (`openssl rand -base64 32`)' });
  if (e.CODEC_AUTH_TOKEN === DEV_CODEC_AUTH_TOKEN) problems.push({ variable: 'CODEC_AUTH_TOKEN', message: 'is the public development token; set a random one' });
  else if (e.CODEC_AUTH_TOKEN !== undefined && Buffer.byteLength(e.CODEC_AUTH_TOKEN, 'utf8') < MIN_PRODUCTION_KEY_BYTES)
    problems.push({ variable: 'CODEC_AUTH_TOKEN', message: `decrypts every history: at least ${MIN_PRODUCTION_KEY_BYTES} bytes in production` });
  if (problems.length > 0) throw new ConfigError(problems);
}
