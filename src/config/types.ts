/** The typed application configuration loadConfig (index.ts) returns. */
import type { MemoryType } from '../core/types';
import type { z } from 'zod';
import type { embedderSchema, llmSchema, LOG_LEVELS, NODE_ENVS } from './values';
import type { ChromaAccess, TemporalConnectionSettings } from './connections';
export interface AppConfig {
  env: (typeof NODE_ENVS)[number];
  http: { host: string; port: number };
  dataDir: string;
  stackDir: string;
  tenants: { tenantId: string; key: string }[];
  /** Operator secret: keyed user pseudonyms and signed tokens derive from it (src/security/secrets.ts). */
  secretKey: Buffer;
  logLevel: (typeof LOG_LEVELS)[number];
  /** `pretty`: one readable line per event (pino-pretty); `json`: one JSON object per line, for log shippers. */
  logFormat: 'pretty' | 'json';
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    retentionDays: number;
    cliPath?: string;
    port: number;
    uiPort: number;
    /** TLS, mTLS and API key towards the server TEMPORAL_ADDRESS names (empty for the local dev server). */
    connection: TemporalConnectionSettings;
  };
  /**
   * `binaries`: where a local server's binaries come from when PG_BIN_DIR is unset (src/stack/binaries.ts).
   * `queryTimeoutMs`, `longQueryTimeoutMs`: the client-side bounds on a statement (src/adapters/postgres/pool.ts).
   */
  postgres: { url?: string; binDir?: string; binaries: 'auto' | 'system' | 'embedded'; port: number; queryTimeoutMs: number; longQueryTimeoutMs: number };
  /** `access`: token, tenant and database at the Chroma CHROMA_URL names (empty for the local one). */
  chroma: { url?: string; port: number; collection: string; access: ChromaAccess };
  embedder: z.infer<typeof embedderSchema> & { localPort: number };
  llm: z.infer<typeof llmSchema>;
  extraction: {
    /** `llm` when a model is configured and CONFLICT_RESOLVER=auto; else `rules`. */
    conflictResolver: 'llm' | 'rules';
    idleSeconds: number;
    dedupSimilarity: number;
    maxMessageChars: number;
    maxMessagesPerConversation: number;
    /** Worker threads of the rule pool, the time limit of one message's rules, failures before quarantine. */
    ruleThreads: number;
    messageTimeoutMs: number;
    quarantineAfterErrors: number;
  };
  /** `queryRewrite`: when recall asks the LLM for extra queries (off the default hot path). */
  /**
   * `personaShare`: the part of the token budget the persona (L3 profile) may take;
   * `personaDebounceSeconds`: how long RebuildPersona waits for a burst of memory changes to end;
   * `personaBuilder`: `llm` when a model is configured and PERSONA_BUILDER=auto, else `template`.
   */
  recall: {
    timeoutMs: number;
    tokenBudget: number;
    queryRewrite: 'off' | 'referential' | 'always';
    rewriteTimeoutMs: number;
    personaShare: number;
    /** Memories this process may hold for the users recalling now (src/recall/working-set-cache.ts); 0 reads every recall through SQL. */
    workingSetMemories: number;
    /** The part of the token budget the scene navigation block (L2) may take, after the persona's. */
    scenesShare: number;
    personaDebounceSeconds: number;
    personaBuilder: 'llm' | 'template';
    /**
     * Cosine similarity (query vs exchange, e5) from which an exchange found only by vector counts
     * as evidence for an ordinary query, for queries mostly in CJK script and for the rest; 1 turns it off.
     */
    exchangeMinSimilarity: { cjk: number; other: number };
  };
  scheduleTimezone: string;
  /** Reminders, daily digests and nudges: the memory speaking first. */
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
  /** The operator secret (≥ 32 bytes, UTF-8) every keyed operation derives its key from. */
  /** The memory page's sign-in: lifetime of a page session and of the one-time code in its link. */
  page: { sessionTtlSeconds: number; codeTtlSeconds: number };
  /**
   * Requests per window and budget, per (tenant, user) and per API key; new user ids per tenant.
   * 0 turns a budget off. State is per API process (src/api/rate-limits.ts).
   */
  rateLimits: RateLimitConfig;
  /** Body size of a message batch; every other route has a fixed limit sized to its schema. */
  maxMessagesBodyBytes: number;
  /**
   * Temporal payload encryption (docs/security.md). `masterKey` wraps every data key; `oldMasterKeys`
   * still unwrap keys wrapped before a rotation. `masterKeyIsDevDefault`: no PAYLOAD_MASTER_KEY was
   * given and the fixed development key is in use. `keyCacheSeconds`: how long a process keeps an
   * unwrapped data key, so a purge elsewhere takes effect within that time.
   */
  payloads: { encryption: boolean; masterKey: Buffer; oldMasterKeys: Buffer[]; masterKeyIsDevDefault: boolean; keyCacheSeconds: number };
  /** The codec server for Temporal UI / CLI: operator token (unset: endpoints disabled) and the UI origins CORS admits. */
  codec: { authToken?: string; corsOrigins: string[] };
  /**
   * Who may reach /mcp: browser origins (`scheme://host[:port]`; a request with any other Origin
   * is refused, one without Origin passes) and Host header values (`hostname` for any port, or
   * `hostname:port`).
   */
  mcp: { allowedOrigins: string[]; allowedHosts: string[] };
  /** Age in days after which the daily sweep deletes each kind of row; null keeps it forever. */
  retention: RetentionDays;
  /** Reconcilers and bounded waits (docs/reliability.md). */
  reliability: ReliabilityConfig;
  /** The memory proxy: the upstream chat completions API (undefined: the proxy answers 503) and how long recall may take before a request goes out without memory. */
  proxy: ProxyConfig;
  /**
   * Exports: how many one tenant may run at once, how many snapshots a process reads at once (each
   * holds a pooled connection while it is read; the rest wait their turn), the time limits of the snapshot's statements and
   * of the whole snapshot (PostgreSQL statement_timeout / idle_in_transaction_session_timeout).
   */
  exports: { concurrencyPerTenant: number; snapshotsAtOnce: number; statementTimeoutMs: number; snapshotTimeoutMs: number };
  /** Live event streams (SSE) open at once, per (tenant, user) and per API key. */
  eventStreams: { perUser: number; perKey: number };
  /** Whether API and worker apply pending migrations at start (else they refuse a schema behind them). */
  migrateOnStart: boolean;
  /** Metrics and traces: the Temporal SDK's Prometheus address (undefined: off); traces exported over OTLP to `otlpEndpoint` when `traces` is 'otlp'. */
  observability: { temporalMetricsAddress?: string; traces: 'off' | 'otlp'; otlpEndpoint?: string };
}

/** What a tenant's proxied request may ask of the upstream (PROXY_* defaults, PROXY_TENANT_POLICIES per tenant). */
export interface ProxyPolicy {
  /** Model names let through; null: any model. */
  models: string[] | null;
  maxN: number;
  /** Largest `max_tokens` / `max_completion_tokens`; also sent when the caller names neither. */
  maxTokens: number;
  /** Whether `tools`, `tool_choice`, `parallel_tool_calls` (and the legacy `functions`) may pass. */
  tools: boolean;
}

export interface ProxyConfig {
  upstreamBaseUrl?: string;
  upstreamApiKey?: string;
  recallTimeoutMs: number;
  /** The bound of one upstream call, from sending the request to the last byte of the answer. */
  upstreamTimeoutMs: number;
  /** Completion tokens per `llm` budget unit: a request spends n × ceil(max tokens / this). */
  tokensPerUnit: number;
  defaultPolicy: ProxyPolicy;
  /** Tenant id → its policy (fields it leaves out take the defaults). */
  tenantPolicies: Record<string, ProxyPolicy>;
}

export interface ReliabilityConfig {
  /** How often the extraction reconciler looks for idle conversations with unextracted messages. */
  reconcileSeconds: number;
  /** How often the exchange indexer embeds new exchanges for dense conversation search. */
  exchangeIndexSeconds: number;
  /** How often the reminder reconciler starts the workflows of open reminders that never got one. */
  reminderReconcileSeconds: number;
  /** How often the vector outbox drains, and how a failed entry is retried before it is dead-lettered. */
  outbox: { drainSeconds: number; maxAttempts: number; baseDelayMs: number; maxDelayMs: number };
  /** How long an API call waits for a workflow's result before answering 202 with the workflow id. */
  workflowWaitMs: number;
  /** Deadline of one call to Temporal (start, signal) made while a client waits. */
  temporalCallMs: number;
}

export interface RetentionDays {
  messages: number | null;
  episodes: number | null;
  notifications: number | null;
  digests: number | null;
}

/** `exports`: units of export work (a page of rows each), charged as an export reads them. */
export type RateLimitBudget = 'recall' | 'writes' | 'llm' | 'exports';
export interface RateLimitConfig {
  windowSeconds: number;
  perUser: Record<RateLimitBudget, number>;
  perKey: Record<RateLimitBudget, number>;
  newUsersPerTenant: number;
}

/** Outside production only: a fixed, public secret, so development and tests need no setup. */
