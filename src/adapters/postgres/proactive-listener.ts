/**
 * The proactive event feed over PostgreSQL: a dedicated connection LISTENs on the channel the
 * notification repository NOTIFYs on (in the writer's transaction, so only committed rows are
 * announced), and reconnects with backoff when it drops.
 */
import type pg from 'pg';
import { PROACTIVE_CHANNEL, type ProactiveEvent, type ProactiveEventFeed, type ProactiveFeedSubscription } from '../../core/ports/proactive';

function parseEvent(payload: string | undefined): ProactiveEvent | undefined {
  if (!payload) return undefined;
  try {
    const e = JSON.parse(payload) as ProactiveEvent;
    return typeof e.userId === 'string' && (e.type === 'notification' || e.type === 'reminder') ? e : undefined;
  } catch {
    // Someone else NOTIFYing garbage on our channel is not our failure; ignore the message.
    return undefined;
  }
}

/** LISTENs with a connection of its own from `pool` (a pooled query connection would lose the LISTEN when handed back). */
export class PostgresProactiveEventFeed implements ProactiveEventFeed {
  constructor(private readonly pool: Pick<pg.Pool, 'connect'>) {}

  listen({ onEvent, log }: Parameters<ProactiveEventFeed['listen']>[0]): ProactiveFeedSubscription {
    const pool = this.pool;
    let client: pg.PoolClient | undefined;
    let closed = false;
    let retry: NodeJS.Timeout | undefined;
    let delay = 500;
    const releaseOf = new WeakMap<pg.PoolClient, (err?: Error) => void>();

    const handle = async (msg: pg.Notification) => {
      const e = parseEvent(msg.payload);
      if (e) await onEvent(e);
    };

    const connect = async () => {
      if (closed) return;
      let release: ((err?: Error) => void) | undefined;
      try {
        const c = await pool.connect();
        // A connection can report an error after close() handed it back (the server going away
        // emits on idle clients too), and pg-pool throws on a second release.
        let released = false;
        release = (err?: Error) => {
          if (released) return;
          released = true;
          c.release(err);
        };
        releaseOf.set(c, release);
        c.on('notification', (msg) => void handle(msg).catch((err: unknown) => log('reading a proactive event failed', err)));
        c.on('error', (err) => {
          if (released) return;
          log('proactive listener connection lost', err);
          release?.(err);
          if (client === c) client = undefined;
          schedule();
        });
        await c.query(`LISTEN ${PROACTIVE_CHANNEL}`);
        if (closed) {
          release();
          return;
        }
        client = c;
        delay = 500;
      } catch (err) {
        log('proactive listener could not connect', err);
        release?.(err instanceof Error ? err : new Error(String(err)));
        schedule();
      }
    };
    const schedule = () => {
      if (closed || retry) return;
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, delay);
      delay = Math.min(delay * 2, 15_000);
    };
    const ready = connect();

    return {
      async close() {
        closed = true;
        if (retry) clearTimeout(retry);
        await ready;
        const c = client;
        client = undefined;
        if (c) {
          await c.query(`UNLISTEN ${PROACTIVE_CHANNEL}`).catch(() => undefined);
          releaseOf.get(c)?.();
        }
      },
    };
  }
}
