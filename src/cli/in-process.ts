import { MemoryClient } from '../client/index';
import type { Runtime } from '../runtime';

export interface InProcessService {
  /** A typed client against the API listening on a free local port. */
  client: MemoryClient;
  /** Stops the worker (letting running tasks finish) and the API. The runtime stays open. */
  close(): Promise<void>;
}

/**
 * The whole service in this process — a worker and the API on a free port — with a client for
 * it: what the evaluation and the end-to-end benchmarks drive, through the public API.
 */
export async function serveInProcess(runtime: Runtime, apiKey: string): Promise<InProcessService> {
  const worker = await runtime.createWorker();
  const running = worker.run();
  const api = await runtime.createApi();
  await api.listen({ host: '127.0.0.1', port: 0 });
  const address = api.server.address();
  const client = new MemoryClient({ baseUrl: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, apiKey });
  return {
    client,
    async close() {
      worker.shutdown();
      await running;
      await api.close();
    },
  };
}
