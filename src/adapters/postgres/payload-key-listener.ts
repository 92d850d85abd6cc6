/**
 * The payload key destructions of every process over PostgreSQL: a connection of its own LISTENs
 * on the channel the key store NOTIFYs on in the statement that destroys a key (so only committed
 * destructions are announced), kept alive by channel-listener.ts.
 */
import pg from 'pg';
import { listenOnChannel } from './channel-listener';
import { KEY_DESTROYED_CHANNEL, type KeyDestructionFeed } from '../../security/payload-keys';

/** How the listener's connection is watched: an idle LISTEN connection notices no outage by itself. */
export interface KeyListenerOptions {
  /** Every how often the connection is asked to answer (default 5 s). */
  heartbeatMs?: number;
  /** How long a connection attempt or a heartbeat may take before the connection counts as lost (default 5 s). */
  timeoutMs?: number;
}

/** Names the connection in pg_stat_activity, for operators and for the tests that wait for it to go. */
export const KEY_LISTENER_APPLICATION_NAME = 'jarvis-memory payload key listener';

/**
 * LISTENs on a client outside the pool: it holds no pool slot for the life of the process, and a
 * pooled connection would lose the LISTEN when handed back.
 */
export class PostgresKeyDestructionFeed implements KeyDestructionFeed {
  constructor(
    private readonly databaseUrl: string,
    private readonly opts: KeyListenerOptions = {},
  ) {}

  listen({ onNotice, onConnected, log }: Parameters<KeyDestructionFeed['listen']>[0]): { close(): Promise<void> } {
    const timeoutMs = this.opts.timeoutMs ?? 5000;
    return listenOnChannel({
      channel: KEY_DESTROYED_CHANNEL,
      label: 'payload key listener',
      open: async () => {
        const c = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, application_name: KEY_LISTENER_APPLICATION_NAME });
        // Not awaited: with a query in flight pg destroys the socket, otherwise it says goodbye.
        const release = () => void c.end().catch(() => undefined);
        // Until the listener has its own handler, an error event must not go unhandled.
        c.on('error', () => undefined);
        try {
          await c.connect();
        } catch (err) {
          release();
          throw err;
        }
        return { client: c, release };
      },
      onNotification: onNotice,
      // Notices missed while not listening are why each new connection has the cache dropped.
      onConnected,
      log,
      ...(this.opts.heartbeatMs !== undefined ? { heartbeatMs: this.opts.heartbeatMs } : {}),
      heartbeatTimeoutMs: timeoutMs,
    });
  }
}
