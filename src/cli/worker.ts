import { loadConfig } from '../config';
import { createRuntime } from '../runtime';
import { startStack } from '../stack';
import { loadDotEnv } from './env-file';
import { exitWith } from './exit';

/** The Temporal worker alone (production: one or more of these next to the API). */
async function main(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const stack = await startStack(config, { log: (line) => console.log(`[stack] ${line}`) });
  const runtime = await createRuntime(config, stack);
  const worker = await runtime.createWorker();
  // Off the start path: the first recall that needs the prototypes embeds them itself if this failed.
  void runtime.warmUp().catch(() => undefined);
  const schedules = await runtime.ensureSchedules();
  console.log(`schedules: ${Object.entries(schedules).map(([id, outcome]) => `${id} ${outcome}`).join(', ')}`);
  const stop = () => worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(`worker polling task queue "${config.temporal.taskQueue}" in namespace "${config.temporal.namespace}"`);
  await worker.run();
  await runtime.close();
  await stack.stop();
}

main().catch((err: unknown) => exitWith('worker', err));
