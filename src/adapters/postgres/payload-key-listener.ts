/**
 * The payload key destructions of every process over PostgreSQL: a connection of its own LISTENs
 * on the channel the key store NOTIFYs on in the statement that destroys a key (so only committed
 * destructions are announced), and reconnects with backoff when it drops, as the proactive event
 * feed does (proactive-listener.ts).
 */
import pg from 'pg';
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
    const heartbeatMs = this.opts.heartbeatMs ?? 5000;
    const timeoutMs = this.opts.timeoutMs ?? 5000;
    let client: pg.Client | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    let closed = false;
    let retry: NodeJS.Timeout | undefined;
    let delay = 500;

    const schedule = () => {
      if (closed || retry) return;
      retry = setTimeout(() => {
        retry = undefined;
        ready = connect();
      }, delay);
      delay = Math.min(delay * 2, 15_000);
    };

    // A server that stops answering keeps the socket open: without an answer to a heartbeat the
    // connection counts as lost. Notices missed meanwhile are why the next connection drops the cache.
    const lost = (c: pg.Client, message: string, err?: unknown) => {
      if (client !== c) return;
      client = undefined;
      clearInterval(heartbeat);
      log(message, err);
      // Not awaited: with a query in flight pg destroys the socket, otherwise it says goodbye.
      c.end().catch(() => undefined);
      schedule();
    };

    const connect = async () => {
      if (closed) return;
      const c = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, application_name: KEY_LISTENER_APPLICATION_NAME });
      c.on('notification', (msg) => {
        if (msg.channel === KEY_DESTROYED_CHANNEL) onNotice(msg.payload);
      });
      c.on('error', (err) => lost(c, 'payload key listener connection lost', err));
      c.on('end', () => lost(c, 'payload key listener connection ended'));
      try {
        await c.connect();
        await c.query(`LISTEN ${KEY_DESTROYED_CHANNEL}`);
      } catch (err) {
        log('payload key listener could not connect', err);
        c.end().catch(() => undefined);
        schedule();
        return;
      }
      if (closed) {
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
      delay = 500;
      // Listening from here on: whatever was destroyed before is in the table, read again.
      onConnected();
      let asking = false;
      heartbeat = setInterval(() => {
        if (asking) return;
        asking = true;
        c.query('SELECT 1')
          .catch((err: unknown) => lost(c, 'payload key listener connection stopped answering', err))
          .finally(() => (asking = false));
      }, heartbeatMs);
      heartbeat.unref();
    };
    let ready = connect();

    return {
      async close() {
        closed = true;
        if (retry) clearTimeout(retry);
        await ready;
        clearInterval(heartbeat);
        const c = client;
        client = undefined;
        if (c) {
          await c.query(`UNLISTEN ${KEY_DESTROYED_CHANNEL}`).catch(() => undefined);
          await c.end().catch(() => undefined);
        }
      },
    };
  }
}
