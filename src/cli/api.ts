import { loadConfig } from '../config';
import { createRuntime } from '../runtime';
import { startStack } from '../stack';
import { loadDotEnv } from './env-file';
import { exitWith } from './exit';

/** The HTTP API alone (production: behind a load balancer, next to the workers). */
async function main(): Promise<void> {
  loadDotEnv();
  const config = loadConfig();
  const stack = await startStack(config, { log: (line) => console.log(`[stack] ${line}`) });
  const runtime = await createRuntime(config, stack);
  const api = await runtime.createApi();
  await api.listen({ host: config.http.host, port: config.http.port });
  // Off the start path: the first recall that needs the prototypes embeds them itself if this failed.
  void runtime.warmUp().catch(() => undefined);
  const stop = async () => {
    await api.close();
    await runtime.close();
    await stack.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((err: unknown) => exitWith('api', err));
