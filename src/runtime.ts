import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime as TemporalRuntime, Worker, type LogLevel, type WorkflowBundleOption } from '@temporalio/worker';
import type { Embeddings } from '@langchain/core/embeddings';
import type pg from 'pg';
import { createActivities } from '../activities';
import { createPrivacyActivities } from '../activities/privacy';
import { ChromaEpisodeIndex } from './adapters/chroma/chroma-episode-index';
import { ChromaVectorIndex } from './adapters/chroma/chroma-vector-index';
import { HashingEmbeddings } from './adapters/embeddings/hashing-embeddings';
import { OpenAICompatibleEmbeddings } from './adapters/embeddings/openai-compatible-embeddings';
import { migrate } from './adapters/postgres/migrate';
import { createPool } from './adapters/postgres/pool';
import { buildApi } from './api/server';
import type { AppConfig } from './config';
import type { ServiceDeps } from './services/deps';
import { OfflineExtractor, type Extractor } from './services/extractor';
import { createChatModel } from './adapters/llm/chat-model';
import { LlmExtractor } from './adapters/llm/llm-extractor';
import { LlmQueryRewriter } from './adapters/llm/query-rewriter';
import { LlmConflictJudge } from './adapters/llm/conflict-judge';
import { signalRecalled } from './services/reinforcement-signal';
import { ensureLifecycleSchedules } from './services/lifecycle-schedules';
import type { StackEndpoints } from './stack';
import type { UserKeyDestroyer } from './core/ports';
import { ServiceSecrets } from './security/secrets';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface Runtime {
  config: AppConfig;
  endpoints: StackEndpoints;
  deps: ServiceDeps;
  temporal: Client;
  createWorker(opts?: { taskQueue?: string; workflowBundle?: WorkflowBundleOption }): Promise<Worker>;
  createApi(opts?: { taskQueue?: string; reinforcementFlushSeconds?: number }): ReturnType<typeof buildApi>;
  /** Creates or updates the Temporal Schedules (idempotent; called at worker start). */
  ensureSchedules(opts?: { taskQueue?: string }): Promise<Record<string, string>>;
  close(): Promise<void>;
}

let sdkLoggerInstalled = false;

/** The SDK logs every worker state change at INFO; follow the service's LOG_LEVEL instead. */
function installSdkLogger(level: AppConfig['logLevel']): void {
  if (sdkLoggerInstalled) return;
  sdkLoggerInstalled = true;
  const map: Record<AppConfig['logLevel'], LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };
  TemporalRuntime.install({ logger: new DefaultLogger(map[level]) });
}

function createEmbeddings(config: AppConfig, endpoints: StackEndpoints): Embeddings {
  if (config.embedder.provider === 'hashing') return new HashingEmbeddings(config.embedder.dimensions);
  return new OpenAICompatibleEmbeddings({ baseUrl: endpoints.embeddingsUrl!, apiKey: config.embedder.apiKey, model: config.embedder.model });
}

function createExtractor(config: AppConfig): Extractor {
  const offline = new OfflineExtractor();
  if (config.llm.provider === 'none') return offline;
  // The offline rules stay as the safe fallback when the model's output is unusable.
  return new LlmExtractor(createChatModel(config.llm), offline, config.llm.model);
}

/**
 * The composition root: connects to the stack's endpoints, applies migrations, and builds the
 * adapters once. Worker and API are created from it, so both see exactly the same wiring.
 */
/**
 * Until SECRET_KEY is configured (the tenancy change), development and tests key the purge audit
 * with a fixed secret; production gets none, and a purge refuses to start rather than write an
 * audit row keyed with a public value.
 */
const DEVELOPMENT_SECRET = Buffer.from('jarvis-memory development secret; never used in production', 'utf8');

export async function createRuntime(config: AppConfig, endpoints: StackEndpoints, opts: { pool?: pg.Pool; migrate?: boolean; secrets?: ServiceSecrets; userKeyDestroyer?: UserKeyDestroyer } = {}): Promise<Runtime> {
  installSdkLogger(config.logLevel);
  if (opts.migrate !== false) await migrate(endpoints.databaseUrl);
  const pool = opts.pool ?? createPool(endpoints.databaseUrl);
  const vectors = await ChromaVectorIndex.create({ url: endpoints.chromaUrl, collection: config.chroma.collection });
  const episodeVectors = await ChromaEpisodeIndex.create({ url: endpoints.chromaUrl, memoryCollection: config.chroma.collection });
  const embeddings = createEmbeddings(config, endpoints);
  const secrets = opts.secrets ?? (config.env === 'production' ? undefined : new ServiceSecrets(DEVELOPMENT_SECRET));
  const deps: ServiceDeps = { pool, vectors, episodeVectors, embeddings, extractor: createExtractor(config), config, secrets, userKeyDestroyer: opts.userKeyDestroyer };
  // The user is waiting on a rewrite: no retries, and the model call ends with its time budget.
  if (config.llm.provider !== 'none') deps.queryRewriter = new LlmQueryRewriter(createChatModel(config.llm, { timeoutMs: config.recall.rewriteTimeoutMs, maxRetries: 0 }));
  // The decide activity has 15 s to close: the model gets 10 s, so a slow one fails clearly and is retried.
  if (config.llm.provider !== 'none' && config.extraction.conflictResolver === 'llm')
    deps.conflictJudge = new LlmConflictJudge(createChatModel(config.llm, { timeoutMs: 10_000, maxRetries: 0 }), config.llm.model);
  const connection = await Connection.connect({ address: endpoints.temporalAddress });
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const workers: NativeConnection[] = [];

  return {
    config,
    endpoints,
    deps,
    temporal,
    async createWorker(o = {}) {
      const nativeConnection = await NativeConnection.connect({ address: endpoints.temporalAddress });
      workers.push(nativeConnection);
      return Worker.create({
        connection: nativeConnection,
        namespace: config.temporal.namespace,
        taskQueue: o.taskQueue ?? config.temporal.taskQueue,
        ...(o.workflowBundle ? { workflowBundle: o.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
        activities: { ...createActivities(deps), ...createPrivacyActivities(deps, { client: temporal, namespace: config.temporal.namespace }) },
      });
    },
    createApi(o = {}) {
      return buildApi(
        {
          pool,
          vectors,
          episodeVectors,
          embeddings,
          queryRewriter: deps.queryRewriter,
          secrets,
          config,
          temporal,
          taskQueue: o.taskQueue ?? config.temporal.taskQueue,
          tenants: config.tenants,
          idleSeconds: config.extraction.idleSeconds,
          probes: { embedder: async () => void (await embeddings.embedQuery('healthz')) },
        },
        {
          logLevel: config.logLevel,
          maxMessageChars: config.extraction.maxMessageChars,
          maxMessagesPerConversation: config.extraction.maxMessagesPerConversation,
          afterRecall: (userId, ids, at) =>
            signalRecalled(temporal, o.taskQueue ?? config.temporal.taskQueue, userId, ids, at, o.reinforcementFlushSeconds ?? 10, (err) =>
              console.error(`recall reinforcement for ${userId} not recorded`, err),
            ),
        },
      );
    },
    async ensureSchedules(o = {}) {
      const taskQueue = o.taskQueue ?? config.temporal.taskQueue;
      // Memory lifecycle (issue #5): daily sweep, weekly reinforcement.
      const lifecycle = await ensureLifecycleSchedules(temporal, { taskQueue, timezone: config.scheduleTimezone });
      return { ...lifecycle };
    },
    async close() {
      await connection.close();
      for (const c of workers) await c.close().catch(() => {});
      if (!opts.pool) await pool.end();
    },
  };
}
