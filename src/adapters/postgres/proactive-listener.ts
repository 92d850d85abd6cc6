/**
 * The proactive event feed over PostgreSQL: a dedicated connection LISTENs on the channel the
 * notification repository NOTIFYs on (in the writer's transaction, so only committed rows are
 * announced), kept alive by channel-listener.ts.
 */
import type pg from 'pg';
import { listenOnChannel } from './channel-listener';
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

/**
 * LISTENs with a connection of its own from `pool` for the life of the feed (channel-listener.ts
 * keeps it alive); the connection goes back to the pool, destroyed if it failed, when it is lost
 * or the feed closes.
 */
export class PostgresProactiveEventFeed implements ProactiveEventFeed {
  constructor(
    private readonly pool: Pick<pg.Pool, 'connect'>,
    private readonly opts: { heartbeatMs?: number; heartbeatTimeoutMs?: number } = {},
  ) {}

  listen({ onEvent, log }: Parameters<ProactiveEventFeed['listen']>[0]): ProactiveFeedSubscription {
    return listenOnChannel({
      channel: PROACTIVE_CHANNEL,
      label: 'proactive listener',
      open: async () => {
        const c = await this.pool.connect();
        return { client: c, release: (err?: Error) => c.release(err) };
      },
      onNotification: (payload) => {
        const e = parseEvent(payload);
        if (e) void onEvent(e).catch((err: unknown) => log('reading a proactive event failed', err));
      },
      log,
      ...this.opts,
    });
  }
}
