import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type GrpcRetryOptions } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { describeTemporalConnection, temporalConnectOptions, type TemporalConnectionSettings } from '../config';
import { StackStartError } from './readiness';
import { rootReason, tlsDiagnosis, tlsHint } from './temporal-tls';

/**
 * Every connection this service opens to Temporal comes from here — the runtime's client, each
 * worker's native connection, the readiness probe and the namespace set-up — with the TLS, mTLS
 * and API key settings of config.temporal.connection (src/config/connections.ts), so none of them
 * connects plainly by accident. A connection that fails says where it went and how (TLS or not,
 * which certificates; never the key), instead of the SDK's bare transport error.
 */
export async function connectTemporal(settings: TemporalConnectionSettings, address: string, opts: { connectTimeoutMs?: number } = {}): Promise<Connection> {
  try {
    return await Connection.connect({
      ...temporalConnectOptions(settings, address),
      interceptors: temporalCallInterceptors(),
      ...(opts.connectTimeoutMs ? { connectTimeout: opts.connectTimeoutMs } : {}),
    });
  } catch (err) {
    throw await connectionFailed(settings, address, err);
  }
}

type GrpcInterceptor = ReturnType<typeof makeGrpcRetryInterceptor>;

/**
 * The client's gRPC interceptors: the SDK's retry of unavailable and transient failures, with its
 * own backoff, except that no retry is slept on past the call's deadline. The SDK's interceptor
 * sleeps its backoff (up to 5 s, jittered) in a timer the deadline does not reach, so a call under
 * a 5 s deadline against a Temporal that refuses connections failed after 6–7 s (9 s on a loaded
 * machine), and a request bounded by TEMPORAL_CALL_TIMEOUT_MS waited that long. Here the last
 * sleep ends at the deadline, where the retried call fails at once (DEADLINE_EXCEEDED), and no
 * timer is left behind to fire on a connection closed meanwhile.
 */
export function temporalCallInterceptors(): GrpcInterceptor[] {
  const sdk = defaultGrpcRetryOptions();
  const unbounded = makeGrpcRetryInterceptor(sdk);
  const withinDeadline: GrpcInterceptor = (options, nextCall) => {
    const deadline = options.deadline === undefined ? Infinity : new Date(options.deadline).getTime();
    if (!Number.isFinite(deadline)) return unbounded(options, nextCall);
    return makeGrpcRetryInterceptor(retriesWithin(sdk, deadline))(options, nextCall);
  };
  return [withinDeadline];
}

/** `retry`'s decisions, with every backoff cut to end by `deadline` (ms since the epoch) and no retry after it. */
export function retriesWithin(retry: GrpcRetryOptions, deadline: number, now: () => number = Date.now): GrpcRetryOptions {
  return {
    delayFunction: (attempt, status) => Math.max(0, Math.min(retry.delayFunction(attempt, status), deadline - now())),
    retryableDecider: (attempt, status) => now() < deadline && retry.retryableDecider(attempt, status),
  };
}

/** The worker's connection (the SDK's native one), with the same settings as {@link connectTemporal}. */
export async function connectTemporalWorker(settings: TemporalConnectionSettings, address: string): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(temporalConnectOptions(settings, address));
  } catch (err) {
    throw await connectionFailed(settings, address, err);
  }
}

export async function connectionFailed(settings: TemporalConnectionSettings, address: string, err: unknown): Promise<StackStartError> {
  const finding = await tlsDiagnosis(settings, address).catch(() => undefined);
  const reason = finding ? `${finding}${tlsHint(settings, finding)} [${rootReason(err)}]` : rootReason(err);
  return new StackStartError(`cannot connect to Temporal at ${address} (TEMPORAL_ADDRESS) over ${describeTemporalConnection(settings)}: ${reason}`, 'Temporal', { cause: err });
}
