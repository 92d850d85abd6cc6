import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Runtime as TemporalRuntime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type pg from 'pg';
import type { Logger } from 'pino';
import { createActivities } from '../activities';
import { createPrivacyActivities } from '../activities/privacy/privacy';
import { createConversationReconcilerActivities } from '../activities/conversation/reconcilers';
import { createReminderReconcilerActivities } from '../activities/proactive/reminder-reconciler';
import { createCallerExtractionActivities } from '../activities/conversation/callers';
import { createDecisionActivities } from '../activities/memory/decisions';
import { createRecallActivities } from '../activities/recall/recall';
import { createPersonaActivities } from '../activities/persona/persona';
import { ChromaEpisodeIndex } from './adapters/chroma/chroma-episode-index';
import { ChromaVectorIndex } from './adapters/chroma/chroma-vector-index';
import { LangChainEmbedder } from './adapters/embeddings/langchain-embedder';
import { RulePool } from './adapters/extraction/rule-pool';
import { PostgresMessageQuarantine } from './adapters/postgres/message-quarantine';
import { ChromaExchangeIndex } from './adapters/chroma/chroma-exchange-index';
import { assertSchemaCurrent, migrate } from './adapters/postgres/migrate';
import { createPool } from './adapters/postgres/pool';
import { PostgresKeyDestructionFeed } from './adapters/postgres/payload-key-listener';
import { PostgresProactiveEventFeed } from './adapters/postgres/proactive-listener';
import { LlmPersonaCondenser } from './adapters/llm/persona-condenser';
import { observeMemoryChanges, personaRebuildSignaller, type PersonaRebuildSignaller } from './persona/persona-signal';
import type { buildApi } from './api/server';
import type { AppConfig } from './config';
import { bundlerLogger, createLogger, temporalLogger } from './logging';
import type { ServiceDeps } from './shared/deps';
import { createEmbeddings, createExtractor } from './runtime/models';
import { postgresPorts } from './runtime/postgres-ports';
import { PostgresWorkingSetSource } from './adapters/postgres/working-set-repository';
import { WorkingSetCache } from './recall/working-set-cache';
import { screenCandidates } from './core/extraction/provenance';
import { createChatModel, loadChatModel, openChatModel } from './adapters/llm/chat-model';
import { LangChainDigestModel } from './adapters/llm/digest-model';
import { LlmQueryRewriter } from './adapters/llm/query-rewriter';
import { LlmConflictJudge } from './adapters/llm/conflict-judge';
import { signalRecalled } from './memory/reinforcement-signal';
import { exchangeVectorEraser } from './conversation/exchange-index';
import { privacyMemoryEraser } from './privacy/memory-erase';
import { signalRecallHits } from './proactive/recall-nudge-signal';
import { mayPromptRecallNudge } from './core/proactive/recall-nudge';
import type { AfterRecall } from './recall/recall';
import { ensureLifecycleSchedules } from './lifecycle/lifecycle-schedules';
import { ensureReliabilitySchedules } from './lifecycle/reliability-schedules';
import type { StackEndpoints } from './stack';
import { connectTemporal, connectTemporalWorker } from './stack/temporal-connection';
import { finishVectorMoves, rekeyLegacyUsers } from './adapters/postgres/tenant-rekey';
import { ServiceSecrets } from './security/secrets';
import { SubjectKeys } from './security/subject';
import { createPayloadEncryption, type PayloadEncryption } from './security/payload-encryption';
import { subjectActivityInterceptor, subjectClientInterceptors } from './security/payload-subject';
import { warmFollowUpPrototypes } from './recall/follow-up-net';
import { warmScenePrototypes } from './persona/scenes';
import { loadWorkflowBundle, sourcesHashAtStart } from './shared/workflow-bundle';
import { flushTracing } from './observability/tracing';
import { startTracing, tracedActivityInterceptors, tracedClientInterceptors, workflowSpanSinks } from './observability/temporal-tracing';

/** How long a stopping worker waits for running activities before it stops without them. */
export const WORKER_SHUTDOWN_FORCE_MS = 30_000;

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * How the workflow bundle is built — by the worker here and by the test setup alike: the sandbox's
 * payload converter tags payloads with their user, and the interceptor hands that user to
 * activities, so the encryption codec can pick the user's data key (docs/security.md).
 */
export const WORKFLOW_BUNDLE_OPTIONS = {
  workflowsPath: WORKFLOWS_PATH,
  payloadConverterPath: fileURLToPath(new URL('../workflows/shared/payload-converter.ts', import.meta.url)),
  // The tracing module is always bundled; it traces only workflows whose start carried a span context.
  workflowInterceptorModules: [
    fileURLToPath(new URL('../workflows/shared/subject-interceptors.ts', import.meta.url)),
    fileURLToPath(new URL('../workflows/shared/trace-interceptors.ts', import.meta.url)),
  ],
};

export interface Runtime {
  config: AppConfig;
  endpoints: StackEndpoints;
  deps: ServiceDeps;
  /** The one PostgreSQL pool the ports are built on: for the composition root's own wiring and for tests, never for use cases. */
  pool: pg.Pool;
  /** Maps (tenant, user) to the key every store uses; the Temporal and MCP entry points need it too. */
  subjects: SubjectKeys;
  temporal: Client;
  /** Temporal payload encryption; undefined when PAYLOAD_ENCRYPTION=off. `keys.destroyUserKey` crypto-shreds a user's payloads. */
  payloadEncryption?: PayloadEncryption;
  /** The data converter of this runtime's Client and Worker; replaying its histories needs it too. */
  dataConverter: DataConverter;
  /**
   * `shutdownForceMs`: how long a stop waits for activities that cannot hear the cancel before the
   * worker stops without them (the CLI processes pass {@link WORKER_SHUTDOWN_FORCE_MS}); absent, a
   * stop waits for them, which in-process callers that close a runtime rely on.
   */
  createWorker(opts?: { taskQueue?: string; workflowBundle?: WorkflowBundleOption; shutdownForceMs?: number }): Promise<Worker>;
  /** `temporal`: another client for the API (tests point one at a closed port: Temporal down). */
  createApi(opts?: { taskQueue?: string; reinforcementFlushSeconds?: number; temporal?: Client }): ReturnType<typeof buildApi>;
  /** Creates or updates the Temporal Schedules (idempotent; called at worker start). */
  ensureSchedules(opts?: { taskQueue?: string }): Promise<Record<string, string>>;
  /**
   * Embeds what the first recall of this process would otherwise wait for (the follow-up
   * prototypes), so it does not miss its deadline. The processes call it after they start,
   * without waiting; a failure is retried by the first recall that needs it.
   */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

let sdkLoggerInstalled = false;

/**
 * The SDK logs through the service's logger: its LOG_LEVEL and LOG_FORMAT (src/logging.ts); its own
 * worker and client metrics go to a Prometheus port when TEMPORAL_METRICS_ADDRESS is set. The
 * runtime is installed once, before any connection or worker exists — later installs would throw.
 */
function installSdkRuntime(logger: Logger, metricsAddress: string | undefined): void {
  if (sdkLoggerInstalled) return;
  sdkLoggerInstalled = true;
  TemporalRuntime.install({ logger: temporalLogger(logger), ...(metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } } : {}) });
}


/**
 * The composition root: connects to the stack's endpoints, applies migrations, and builds the
 * adapters once. Worker and API are created from it, so both see exactly the same wiring.
 */
export async function createRuntime(config: AppConfig, endpoints: StackEndpoints, opts: { pool?: pg.Pool; migrate?: boolean } = {}): Promise<Runtime> {
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  installSdkRuntime(logger, config.observability.temporalMetricsAddress);
  // One tracer provider per process, however many runtimes it builds (tests build several).
  const traces = config.observability.traces === 'otlp';
  if (traces) await startTracing({ endpoint: config.observability.otlpEndpoint });
  // Production migrates as its own step (`npm run migrate`, MIGRATE_ON_START): then only check.
  if (opts.migrate ?? config.migrateOnStart) await migrate(endpoints.databaseUrl);
  else await assertSchemaCurrent(endpoints.databaseUrl);
  performance.mark('startup:migrations');
  const pool = opts.pool ?? createPool(endpoints.databaseUrl, { queryTimeoutMs: config.postgres.queryTimeoutMs, longQueryTimeoutMs: config.postgres.longQueryTimeoutMs });
  const chroma = { url: endpoints.chromaUrl, access: config.chroma.access };
  const vectors = await ChromaVectorIndex.create({ ...chroma, collection: config.chroma.collection });
  const episodeVectors = await ChromaEpisodeIndex.create({ ...chroma, memoryCollection: config.chroma.collection });
  const exchangeVectors = ChromaExchangeIndex.create({ ...chroma, memoryCollection: config.chroma.collection });
  performance.mark('startup:chroma');
  // The chat models' integration is imported only when one is configured (src/adapters/llm/chat-model.ts).
  if (config.llm.provider !== 'none') await loadChatModel(config.llm);
  const models = createEmbeddings(config, endpoints);
  const secrets = new ServiceSecrets(config.secretKey);
  const subjects = new SubjectKeys(secrets);
  // Data fix-ups with the service's keys and Chroma: idempotent, so they stay at every start.
  if (opts.migrate !== false) {
    await rekeyLegacyUsers(pool, (tenantId, userId) => subjects.userKey({ tenantId, userId }));
    await finishVectorMoves(pool, async (move) => {
      await vectors.moveUser(move);
      await episodeVectors.moveUser(move);
    });
  }
  performance.mark('startup:data-fixups');
  const payloadEncryption = createPayloadEncryption(pool, config.payloads);
  // Purge destroys the user's payload data key: every copy of their Temporal histories goes dark.
  const ports = postgresPorts(pool);
  // Threads start on the first extraction, not here: a process that never extracts holds none.
  const rules = new RulePool({ threads: config.extraction.ruleThreads, messageTimeoutMs: config.extraction.messageTimeoutMs, screenTimeoutMs: 4 * config.extraction.messageTimeoutMs });
  const quarantine = new PostgresMessageQuarantine(pool);
  const workingSets = new WorkingSetCache(new PostgresWorkingSetSource(pool), { maxMemories: config.recall.workingSetMemories }).startSweeping();
  const deps: ServiceDeps = {
    ...ports,
    workingSets,
    embedder: new LangChainEmbedder(models.interactive, models.background),
    vectors,
    episodeVectors,
    exchangeVectors,
    // The retention sweep (lifecycle) erases expired messages' vectors through this port of its own.
    messageVectorEraser: exchangeVectorEraser({ exchangeVectors }),
    extractor: createExtractor(config, models.endpoint, rules),
    provenanceScreen: screenCandidates,
    rules,
    quarantine,
    config,
    secrets,
    userKeyDestroyer: payloadEncryption?.keys,
  };
  // The user is waiting on a rewrite: no retries, and the model call ends with its time budget.
  if (config.llm.provider !== 'none') deps.queryRewriter = new LlmQueryRewriter(createChatModel(config.llm, { timeoutMs: config.recall.rewriteTimeoutMs, maxRetries: 0 }));
  // The digest opens its model per digest, inside its template fallback (src/proactive/digest-writer.ts).
  if (config.llm.provider !== 'none') {
    const llm = config.llm;
    deps.digestModel = new LangChainDigestModel(() => openChatModel(llm));
  }
  // The decide activity has 15 s to close: the model gets 10 s, so a slow one fails clearly and is retried.
  // The persona's model step runs in a background activity that heartbeats: a minute, one retry.
  if (config.llm.provider !== 'none' && config.recall.personaBuilder === 'llm') deps.personaCondenser = new LlmPersonaCondenser(createChatModel(config.llm), config.llm.model);
  if (config.llm.provider !== 'none' && config.extraction.conflictResolver === 'llm')
    deps.conflictJudge = new LlmConflictJudge(createChatModel(config.llm, { timeoutMs: 10_000, maxRetries: 0 }), config.llm.model);
  if (payloadEncryption && config.payloads.masterKeyIsDevDefault && config.env === 'production') {
    console.warn('PAYLOAD_MASTER_KEY is not set: Temporal payloads are encrypted under the public development master key');
  }
  // After a master key rotation, move every data key to the new master key (one row per user).
  if (payloadEncryption && config.payloads.oldMasterKeys.length > 0) await payloadEncryption.keys.rewrapAll();
  const dataConverter: DataConverter = payloadEncryption?.dataConverter ?? {};
  const connection = await connectTemporal(config.temporal.connection, endpoints.temporalAddress);
  performance.mark('startup:temporal-client');
  const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter, interceptors: tracedClientInterceptors(subjectClientInterceptors, traces) });
  // Every committed memory change signals the user's RebuildPersona workflow on the given task queue.
  const personaSignallers: PersonaRebuildSignaller[] = [];
  const rebuildingPersonas = (unitOfWork: ServiceDeps['unitOfWork'], taskQueue: string) => {
    const signaller = personaRebuildSignaller(temporal, {
      taskQueue,
      debounceSeconds: config.recall.personaDebounceSeconds,
      onError: (userKey, err) => logger.warn({ err }, `persona rebuild of ${userKey} not signalled`),
    });
    personaSignallers.push(signaller);
    return observeMemoryChanges(unitOfWork, signaller);
  };
  // What a recall hands to Temporal once its answer is computed, never awaited by it: the recalled
  // ids to the reinforcement batch, and the goals and pain points among them to the nudge check
  // (an open one may get a nudge, decided off the hot path). Each under TEMPORAL_CALL_TIMEOUT_MS.
  // A recall with neither sends one signal, not two: each costs the API ~0.9 ms of CPU (gRPC and
  // payload encryption), and Temporal and the worker a history event each (docs/benchmarks.md).
  const handOverRecall =
    (taskQueue: string, flushSeconds: number): AfterRecall =>
    (userId, recalled, at) => {
      const callMs = config.reliability.temporalCallMs;
      const ids = recalled.map((m) => m.id);
      const nudgeable = recalled.filter((m) => mayPromptRecallNudge(m.type)).map((m) => m.id);
      signalRecalled(temporal, taskQueue, userId, ids, at, flushSeconds, (err) => console.error(`recall reinforcement for ${userId} not recorded`, err), callMs);
      signalRecallHits(temporal, taskQueue, userId, nudgeable, at, (err) => console.error(`recall nudge check for ${userId} not started`, err), callMs);
    };
  // Another process's purge reaches this one's key cache within about a second, not at its expiry.
  const keyDestructions = payloadEncryption?.keys.follow(new PostgresKeyDestructionFeed(endpoints.databaseUrl), (message, err) => logger.warn({ err }, message));
  const workers: NativeConnection[] = [];
  let bundle: Promise<WorkflowBundleOption> | undefined;
  // The bundle of `npm run build:workflows` when it is fresh (a restart in seconds), else bundled here.
  const workflowBundle = () =>
    (bundle ??= sourcesHashAtStart(WORKFLOW_BUNDLE_OPTIONS)
      .then(loadWorkflowBundle)
      .then(async (prebuilt) => prebuilt ?? { code: (await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: bundlerLogger(TemporalRuntime.instance().logger) })).code }));

  return {
    config,
    endpoints,
    deps,
    pool,
    subjects,
    temporal,
    payloadEncryption,
    dataConverter,
    async createWorker(o = {}) {
      const code = o.workflowBundle ?? (await workflowBundle());
      performance.mark('startup:bundle');
      const taskQueue = o.taskQueue ?? config.temporal.taskQueue;
      // A view of `deps`, not a copy: later changes to deps (tests swap ports) still reach the activities.
      const unitOfWork = rebuildingPersonas(deps.unitOfWork, taskQueue);
      const activityDeps = new Proxy(deps, { get: (target, name, receiver) => (name === 'unitOfWork' ? unitOfWork : Reflect.get(target, name, receiver)) });
      const nativeConnection = await connectTemporalWorker(config.temporal.connection, endpoints.temporalAddress);
      workers.push(nativeConnection);
      performance.mark('startup:worker-connection');
      return Worker.create({
        connection: nativeConnection,
        namespace: config.temporal.namespace,
        taskQueue: o.taskQueue ?? config.temporal.taskQueue,
        // Bundled here (not from workflowsPath) so the worker never require()s the converter module.
        workflowBundle: code,
        dataConverter,
        // A stop cancels running activities at once, but one that never heartbeats never hears it
        // (an embedding of a long backlog) and held Ctrl-C for minutes. Past this the worker stops
        // anyway; the attempt it abandoned is retried by another worker after its timeout.
        ...(o.shutdownForceMs === undefined ? {} : { shutdownForceTime: o.shutdownForceMs }),
        interceptors: { activity: tracedActivityInterceptors([subjectActivityInterceptor], traces) },
        sinks: workflowSpanSinks(),
        activities: {
          ...createActivities(activityDeps),
          ...createPrivacyActivities(activityDeps, { client: temporal, namespace: config.temporal.namespace }),
          ...createConversationReconcilerActivities(activityDeps, { client: temporal, taskQueue: o.taskQueue ?? config.temporal.taskQueue, subjects }),
          ...createReminderReconcilerActivities(activityDeps, { client: temporal, taskQueue: o.taskQueue ?? config.temporal.taskQueue }),
          ...createDecisionActivities(activityDeps, { eraser: privacyMemoryEraser(activityDeps) }),
          // The persona (read path L3), rebuilt by RebuildPersona when memories change.
          ...createPersonaActivities(activityDeps),
          // The Temporal contract for callers (src/client/temporal-contract.ts): recall and ExtractMemories' steps.
          ...createCallerExtractionActivities(activityDeps, { subjects, tenants: config.tenants }),
          ...createRecallActivities(activityDeps, {
            subjects,
            tenants: config.tenants,
            afterRecall: handOverRecall(o.taskQueue ?? config.temporal.taskQueue, 10),
          }),
        },
      });
    },
    async createApi(o = {}) {
      // Loaded here, not at the top: a worker never serves HTTP and would pay for Fastify at every start.
      const { buildApi } = await import('./api/server');
      return buildApi(
        {
          ...ports,
          // The API's own memory writes (the MCP tools' forget) signal persona rebuilds too.
          unitOfWork: rebuildingPersonas(ports.unitOfWork, o.taskQueue ?? config.temporal.taskQueue),
          embedder: deps.embedder,
          vectors,
          episodeVectors,
          exchangeVectors,
          queryRewriter: deps.queryRewriter,
          provenanceScreen: deps.provenanceScreen,
          // A message batch is segmented for conversation search on these threads, not the API's event loop.
          rules: deps.rules,
          quarantine,
          // The API's own PostgreSQL uses: the health ping, the shared rate-limit counters, the live events' LISTEN.
          pingPostgres: () => pool.query('SELECT 1'),
          rateLimitDb: pool,
          proactiveEvents: new PostgresProactiveEventFeed(pool),
          config,
          temporal: o.temporal ?? temporal,
          codecServer: payloadEncryption && { codec: payloadEncryption.codec, ...config.codec },
          taskQueue: o.taskQueue ?? config.temporal.taskQueue,
          tenants: config.tenants,
          secrets,
          subjects,
          idleSeconds: config.extraction.idleSeconds,
          // embedDocuments, not embedQuery: query embeddings are cached, so after the first
          // probe every later one answered from the cache and called a dead embedder "ok".
          probes: { embedder: async () => void (await models.interactive.embedDocuments(['healthz'])) },
        },
        {
          logLevel: config.logLevel,
          logger,
          traces,
          logFormat: config.logFormat,
          maxMessageChars: config.extraction.maxMessageChars,
          maxMessagesPerConversation: config.extraction.maxMessagesPerConversation,
          afterRecall: handOverRecall(o.taskQueue ?? config.temporal.taskQueue, o.reinforcementFlushSeconds ?? 10),
        },
      );
    },
    async ensureSchedules(o = {}) {
      const taskQueue = o.taskQueue ?? config.temporal.taskQueue;
      // Memory lifecycle, so memories fade and the important ones stay: daily sweep, weekly reinforcement.
      const lifecycle = await ensureLifecycleSchedules(temporal, { taskQueue, timezone: config.scheduleTimezone });
      // Reliability, so messages, reminders and vectors stored while Temporal or Chroma was down still land: extraction and reminder reconcilers, vector outbox drain, exchange indexer.
      const reliability = await ensureReliabilitySchedules(temporal, {
        taskQueue,
        reconcileSeconds: config.reliability.reconcileSeconds,
        drainSeconds: config.reliability.outbox.drainSeconds,
        reminderReconcileSeconds: config.reliability.reminderReconcileSeconds,
        exchangeIndexSeconds: config.reliability.exchangeIndexSeconds,
      });
      return { ...lifecycle, ...reliability };
    },
    async warmUp() {
      const warn = (message: string) => logger.warn(message);
      await Promise.all([warmFollowUpPrototypes(deps.embedder, config, warn), warmScenePrototypes(deps.embedder, config, warn)]);
    },
    async close() {
      workingSets.close();
      // Before the Temporal connection and the pool (the payload codec reads keys from it) close.
      const stopped = await Promise.all(personaSignallers.map((s) => s.close()));
      const dropped = stopped.reduce((sum, r) => sum + r.dropped + r.unanswered, 0);
      if (dropped > 0) logger.warn(`persona rebuilds of ${dropped} user(s) not signalled: stopping; each profile is rebuilt at its user's next memory change`);
      await rules.close();
      // A test may have swapped in a pool of its own (test/fixtures/slow-rule-worker.mjs).
      if (deps.rules && deps.rules !== rules) await deps.rules.close();
      await connection.close();
      for (const c of workers) await c.close().catch(() => {});
      await keyDestructions?.close();
      if (!opts.pool) await pool.end();
      // The workers' last workflow spans arrive through their sinks before this point.
      await flushTracing().catch(() => undefined);
    },
  };
}
