/**
 * One LISTEN on one channel for the life of a process, kept alive: a dedicated connection (a
 * pooled query connection would lose the LISTEN when handed back), asked to answer every so often
 * (an idle LISTEN connection to a server that stopped answering notices nothing by itself), and
 * opened again with backoff when it is lost. The proactive event feed (proactive-listener.ts)
 * and the payload key destructions (payload-key-listener.ts) both listen through it.
 */
import type pg from 'pg';

/** What a listener needs of a connection: pg's Client and PoolClient both are one. */
export type ListeningClient = Pick<pg.ClientBase, 'query' | 'on'>;

/** An open connection, and how to give it up: `err` when it failed, so a pool does not reuse it. */
export interface OpenedConnection {
  client: ListeningClient;
  release(err?: Error): void;
}

export interface ChannelListenerOptions {
  channel: string;
  /** Opens a connection, or rejects; the listener gives up a connection only through its `release`. */
  open(): Promise<OpenedConnection>;
  /** Starts every log line: "<label> connection lost". */
  label: string;
  onNotification(payload: string | undefined): void;
  /** Runs each time the LISTEN is in place, the first time included: what was announced before it is lost. */
  onConnected?(): void;
  log(message: string, err?: unknown): void;
  /** Every how often the connection is asked to answer (default 5 s). */
  heartbeatMs?: number;
  /** How long an answer to that may take before the connection counts as lost (default 5 s). */
  heartbeatTimeoutMs?: number;
}

const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 15_000;

export function listenOnChannel(opts: ChannelListenerOptions): { close(): Promise<void> } {
  const { channel, label, log } = opts;
  const heartbeatMs = opts.heartbeatMs ?? 5000;
  const heartbeatTimeoutMs = opts.heartbeatTimeoutMs ?? 5000;
  let current: OpenedConnection | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;

  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      ready = connect();
    }, delay);
    delay = Math.min(delay * 2, LONGEST_RETRY_MS);
  };

  // A connection can report an error after it was given up (the server going away emits on idle
  // clients too), and a pool throws on a second release: each connection is given up once.
  const releaseOnce = (conn: OpenedConnection) => {
    let released = false;
    return (err?: Error) => {
      if (released) return;
      released = true;
      conn.release(err);
    };
  };

  const connect = async () => {
    if (closed) return;
    let opened: OpenedConnection | undefined;
    try {
      const conn = await opts.open();
      opened = { client: conn.client, release: releaseOnce(conn) };
      const c = opened.client;
      const self = opened;
      const lost = (message: string, err?: unknown) => {
        self.release(err instanceof Error ? err : new Error(message));
        if (current !== self) return;
        current = undefined;
        clearInterval(heartbeat);
        log(`${label} ${message}`, err);
        schedule();
      };
      c.on('notification', (msg: pg.Notification) => {
        if (msg.channel === channel) opts.onNotification(msg.payload);
      });
      c.on('error', (err: Error) => lost('connection lost', err));
      c.on('end', () => lost('connection ended'));
      await c.query(`LISTEN ${channel}`);
      if (closed) {
        opened.release();
        return;
      }
      current = opened;
      delay = FIRST_RETRY_MS;
      opts.onConnected?.();
      let asking = false;
      heartbeat = setInterval(() => {
        if (asking) return;
        asking = true;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${heartbeatTimeoutMs} ms`)), heartbeatTimeoutMs);
        });
        Promise.race([c.query('SELECT 1'), late])
          .catch((err: unknown) => lost('connection stopped answering', err))
          .finally(() => {
            clearTimeout(timer);
            asking = false;
          });
      }, heartbeatMs);
      heartbeat.unref();
    } catch (err) {
      log(`${label} could not connect`, err);
      opened?.release(err instanceof Error ? err : new Error(String(err)));
      schedule();
    }
  };
  let ready = connect();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await ready;
      clearInterval(heartbeat);
      const conn = current;
      current = undefined;
      if (conn) {
        await conn.client.query(`UNLISTEN ${channel}`).catch(() => undefined);
        conn.release();
      }
    },
  };
}
