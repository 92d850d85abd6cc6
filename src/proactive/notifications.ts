/**
 * Live delivery of proactive events to open pages. Workers write notifications to PostgreSQL and
 * NOTIFY a channel in the same transaction; every API process LISTENs on it and fans events out
 * to its Server-Sent-Event subscribers through an in-process hub. Worker and API may thus run in
 * different processes (or machines) and a page still hears about a reminder the moment it fires.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { PROACTIVE_CHANNEL, type NewNotification, type NotificationKind, type NotificationRecord, type ProactiveEvent, type ReminderRecord } from '../core/ports/proactive';
import type { ServiceDeps } from '../shared/deps';

/** What a page receives: a stored notification, or a reminder whose state changed. */
export type LiveEvent =
  | { event: 'notification'; id: string; notification: NotificationRecord }
  | { event: 'reminder'; id: string; reminder: ReminderRecord };

type Listener = (event: LiveEvent) => void;

/** In-process fan-out by user id. */
export class NotificationHub {
  private readonly listeners = new Map<string, Set<Listener>>();

  subscribe(userId: string, listener: Listener): () => void {
    let set = this.listeners.get(userId);
    if (!set) this.listeners.set(userId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(userId);
    };
  }

  subscriberCount(userId: string): number {
    return this.listeners.get(userId)?.size ?? 0;
  }

  publish(userId: string, event: LiveEvent): void {
    for (const listener of this.listeners.get(userId) ?? []) {
      try {
        listener(event);
      } catch (err) {
        // One broken stream must not starve the others.
        console.error('notification listener failed', err);
      }
    }
  }
}

/**
 * Stores a notification (once per idempotency key) and announces it on commit. Returns the row
 * and whether this call created it.
 */
export async function storeAndAnnounce(deps: Pick<ServiceDeps, 'unitOfWork'>, n: Omit<NewNotification, 'id'>, at: Date): Promise<{ notification: NotificationRecord; created: boolean }> {
  return deps.unitOfWork.run({
    work: async (tx) => {
      const result = await tx.notifications.insert({ notification: { ...n, id: randomUUID() }, at });
      if (result.created) await tx.notifications.announce({ type: 'notification', userId: n.userId, id: result.notification.id, seq: result.notification.seq });
      return result;
    },
  });
}

/** The user's notifications: newest first, or — with `afterSeq` — those after it, oldest first (an event stream's resume). */
export async function listNotifications(
  deps: Pick<ServiceDeps, 'notifications'>,
  input: { userId: string; limit: number; kind?: NotificationKind; unread?: boolean; afterSeq?: number },
): Promise<NotificationRecord[]> {
  return deps.notifications.list(input);
}

/** Marks notifications read; how many were unread. */
export async function markNotificationsRead(deps: Pick<ServiceDeps, 'notifications'>, input: { userId: string; ids: string[]; at: Date }): Promise<number> {
  return deps.notifications.markRead(input);
}

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

/** What the live event stream reads: the two ports, and the pool its dedicated LISTEN connection comes from. */
export type ProactiveListenerDeps = Pick<ServiceDeps, 'notifications' | 'reminders'> & { listenPool: Pick<pg.Pool, 'connect'> };

export interface ProactiveListener {
  close(): Promise<void>;
}

/**
 * LISTENs on the proactive channel with a dedicated connection from `pool` and republishes each
 * event to `hub` (only for users someone is subscribed to). Reconnects with backoff when the
 * connection drops; events missed meanwhile are recovered by the page's Last-Event-ID resume.
 */
export function listenForProactiveEvents(
  deps: ProactiveListenerDeps,
  hub: NotificationHub,
  log: (msg: string, err?: unknown) => void = () => {},
): ProactiveListener {
  const pool = deps.listenPool;
  let client: pg.PoolClient | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 500;
  const releaseOf = new WeakMap<pg.PoolClient, (err?: Error) => void>();

  const handle = async (msg: pg.Notification) => {
    const e = parseEvent(msg.payload);
    if (!e || hub.subscriberCount(e.userId) === 0) return;
    if (e.type === 'notification') {
      const notification = await deps.notifications.get({ userId: e.userId, id: e.id });
      if (notification) hub.publish(e.userId, { event: 'notification', id: String(notification.seq), notification });
    } else {
      const reminder = await deps.reminders.get({ userId: e.userId, id: e.reminderId });
      if (reminder) hub.publish(e.userId, { event: 'reminder', id: '', reminder });
    }
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
