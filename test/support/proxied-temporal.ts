import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../src/stack/managed-process';
import { temporalCallInterceptors } from '../../src/stack/temporal-connection';
import type { TestContext } from './harness';

/**
 * A Temporal client like the test runtime's own (namespace, payload codec, client and gRPC
 * interceptors) that
 * reaches Temporal through `address`: a fault proxy the test can hang or cut, so an API built on
 * it meets a dead or stopped Temporal while the shared stack keeps serving other test files.
 */
export function temporalClientThrough(ctx: TestContext, address: string): Client {
  return new Client({
    connection: productionLikeConnection(address),
    namespace: ctx.runtime.config.temporal.namespace,
    dataConverter: ctx.runtime.dataConverter,
    interceptors: ctx.runtime.temporal.options.interceptors,
  });
}

/**
 * A Temporal client whose address nothing listens on (`port`, closed again at once): every call
 * meets a refused connection, with the production client's retries.
 */
export async function deadTemporalClient(namespace: string): Promise<{ temporal: Client; port: number }> {
  const port = await freePort();
  return { temporal: new Client({ connection: productionLikeConnection(`127.0.0.1:${port}`), namespace }), port };
}

/**
 * A lazy connection with the production client's gRPC interceptors (src/stack/temporal-connection.ts),
 * so a fault test meets an outage with the retries and deadlines the API has.
 */
function productionLikeConnection(address: string): Connection {
  return Connection.lazy({ address, interceptors: temporalCallInterceptors() });
}
