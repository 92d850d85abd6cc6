import { loadConfig } from '../config';
import { createRuntime, WORKER_SHUTDOWN_FORCE_MS, WORKFLOW_BUNDLE_OPTIONS } from '../runtime';
import { assertBuiltFrom, sourcesHashAtStart } from '../shared/workflow-bundle';
import { startStack } from '../stack';
import { loadDotEnv } from './env-file';
import { exitWith } from './exit';
import { markStartup, startupTimingsLine } from './startup-timings';

/** Set by esbuild in the compiled entry (src/cli/compile-entry.ts): the hash of the sources it was built from. */
declare const __JARVIS_BUILT_SOURCES__: string | undefined;

/** The Temporal worker alone (production: one or more of these next to the API). */
async function main(): Promise<void> {
  markStartup('imports');
  // Compiled code older than the sources would run other activities than the workflows it bundles.
  if (typeof __JARVIS_BUILT_SOURCES__ === 'string') assertBuiltFrom(__JARVIS_BUILT_SOURCES__, await sourcesHashAtStart(WORKFLOW_BUNDLE_OPTIONS));
  loadDotEnv();
  const config = loadConfig();
  markStartup('config');
  const stack = await startStack(config, { log: (line) => console.log(`[stack] ${line}`) });
  markStartup('stack');
  const runtime = await createRuntime(config, stack);
  markStartup('runtime');
  const worker = await runtime.createWorker({ shutdownForceMs: WORKER_SHUTDOWN_FORCE_MS });
  markStartup('worker-create');
  const stop = () => worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Polling first: the schedules already exist after the first start (this only checks them) and
  // the warm-up is for the first recall, so neither holds back the task queue.
  const running = worker.run();
  const polling = whenRunning(worker);
  console.log(`worker polling task queue "${config.temporal.taskQueue}" in namespace "${config.temporal.namespace}"`);
  if (process.argv.includes('--timings')) void polling.then(() => console.log(startupTimingsLine()));
  // Off the start path: the first recall that needs the prototypes embeds them itself if this failed.
  void polling.then(() => runtime.warmUp()).catch(() => undefined);
  const schedules = await runtime.ensureSchedules();
  console.log(`schedules: ${Object.entries(schedules).map(([id, outcome]) => `${id} ${outcome}`).join(', ')}`);
  let drained = true;
  try {
    await running;
  } catch (err) {
    // Stopped past WORKER_SHUTDOWN_FORCE_MS with activities still running: the stores are still
    // closed, and the exit code says the stop was not clean.
    drained = false;
    console.error(`worker stopped without draining: ${err instanceof Error ? err.message : String(err)}`);
  }
  await runtime.close();
  await stack.stop();
  // An abandoned activity may still hold the event loop.
  if (!drained) process.exit(1);
}

/** Resolves once the worker polls its task queue (the SDK has no event for it). */
async function whenRunning(worker: { getState(): string }): Promise<void> {
  while (worker.getState() === 'INITIALIZED') await new Promise((r) => setTimeout(r, 5));
  markStartup('polling');
}

main().catch((err: unknown) => exitWith('worker', err));
