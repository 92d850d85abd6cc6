import { Client, Connection } from '@temporalio/client';
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
    connection: Connection.lazy({ address, interceptors: temporalCallInterceptors() }),
    namespace: ctx.runtime.config.temporal.namespace,
    dataConverter: ctx.runtime.dataConverter,
    interceptors: ctx.runtime.temporal.options.interceptors,
  });
}
