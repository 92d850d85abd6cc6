import { loadConfig } from '../config';
import { StackStartError } from '../stack/readiness';
import { loadDotEnv } from './env-file';
import { exitWith } from './exit';
import { createRuntime, WORKER_SHUTDOWN_FORCE_MS } from '../runtime';
import { redactDatabaseUrl, startStack } from '../stack';

/**
 * `npm run dev`: the whole service in one process — local stack for whatever is not configured,
 * migrations, the Temporal worker and the HTTP API — stopped together on Ctrl-C.
 */
async function main(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const stack = await startStack(config, { log: (line) => console.log(`[stack] ${line}`) });
  const runtime = await createRuntime(config, stack);
  const worker = await runtime.createWorker({ shutdownForceMs: WORKER_SHUTDOWN_FORCE_MS });
  const schedules = await runtime.ensureSchedules();
  console.log(`[schedules] ${Object.entries(schedules).map(([id, outcome]) => `${id} ${outcome}`).join(', ')}`);
  const api = await runtime.createApi();
  await api.listen({ host: config.http.host, port: config.http.port }).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new StackStartError(`port ${config.http.port} for the API is already in use: stop what holds it, or set PORT to another port`, 'API', { cause: err });
    }
    throw err;
  });
  const running = worker.run();
  // Off the start path: the first recall that needs the prototypes embeds them itself if this failed.
  void runtime.warmUp().catch(() => undefined);
  const base = `http://${config.http.host}:${config.http.port}`;
  console.log(`
jarvis-memory is up
  API           ${base}   (OpenAPI: ${base}/openapi.json, health: ${base}/healthz)
  Temporal UI   ${stack.temporalUiUrl ?? '(external Temporal: ' + stack.temporalAddress + ')'}   namespace ${config.temporal.namespace}
  PostgreSQL    ${redactDatabaseUrl(stack.databaseUrl)}
  Chroma        ${stack.chromaUrl}
  Embeddings    ${stack.embeddingsUrl ?? config.embedder.provider}
  Data          ${stack.dataDir}
  Try: curl -s -H 'Authorization: Bearer ${config.tenants[0]!.key}' ${base}/v1/users/alice/memories
  Memory page: curl -s -X POST -H 'Authorization: Bearer ${config.tenants[0]!.key}' ${base}/v1/users/alice/page-token
               and open ${base} followed by the "url" it returns (a one-time sign-in link)
`);
  // The API first (no new requests, the notifications listener ends while PostgreSQL is still
  // there), then the worker, then the stores; a second Ctrl-C while stopping is not a second stop.
  let stopping = false;
  const step = async (what: string, fn: () => Promise<unknown> | unknown) => {
    try {
      await fn();
    } catch (err) {
      console.error(`[dev] stopping ${what}: ${(err as Error).message ?? String(err)}`);
    }
  };
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await step('the API', () => api.close());
    // The SDK stops the worker on the same signal by itself: asked again while it drains, it throws.
    if (worker.getState() === 'RUNNING') await step('the worker', () => worker.shutdown());
    await step('the worker', () => running);
    await step('the runtime', () => runtime.close());
    await step('the stack', () => stack.stop());
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  await running;
}

main().catch((err: unknown) => exitWith('dev', err));
