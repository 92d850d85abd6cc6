import { Connection } from '@temporalio/client';
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
    return await Connection.connect({ ...temporalConnectOptions(settings, address), ...(opts.connectTimeoutMs ? { connectTimeout: opts.connectTimeoutMs } : {}) });
  } catch (err) {
    throw await connectionFailed(settings, address, err);
  }
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
