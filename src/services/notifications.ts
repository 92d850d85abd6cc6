/**
 * Live delivery of proactive events to open pages. Workers write notifications to PostgreSQL and
 * NOTIFY a channel in the same transaction; every API process LISTENs on it and fans events out
 * to its Server-Sent-Event subscribers through an in-process hub. Worker and API may thus run in
 * different processes (or machines) and a page still hears about a reminder the moment it fires.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { inTransaction } from '../adapters/postgres/pool';
import {
  notificationStore,
  PROACTIVE_CHANNEL,
  type NewNotification,
  type NotificationRecord,
  type ProactiveEvent,
} from '../adapters/postgres/notification-repository';
import { reminderStore, type ReminderRecord } from '../adapters/postgres/reminder-repository';

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
export async function storeAndAnnounce(pool: pg.Pool, n: Omit<NewNotification, 'id'>, at: Date): Promise<{ notification: NotificationRecord; created: boolean }> {
  return inTransaction(pool, async (c) => {
    const result = await notificationStore.insert(c, { ...n, id: randomUUID() }, at);
    if (result.created) await notificationStore.announce(c, { type: 'notification', userId: n.userId, id: result.notification.id, seq: result.notification.seq });
    return result;
  });
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

export interface ProactiveListener {
  close(): Promise<void>;
}

/**
 * LISTENs on the proactive channel with a dedicated connection from `pool` and republishes each
 * event to `hub` (only for users someone is subscribed to). Reconnects with backoff when the
 * connection drops; events missed meanwhile are recovered by the page's Last-Event-ID resume.
 */
export function listenForProactiveEvents(pool: pg.Pool, hub: NotificationHub, log: (msg: string, err?: unknown) => void = () => {}): ProactiveListener {
  let client: pg.PoolClient | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 500;

  const handle = async (msg: pg.Notification) => {
    const e = parseEvent(msg.payload);
    if (!e || hub.subscriberCount(e.userId) === 0) return;
    if (e.type === 'notification') {
      const notification = await notificationStore.get(pool, e.userId, e.id);
      if (notification) hub.publish(e.userId, { event: 'notification', id: String(notification.seq), notification });
    } else {
      const reminder = await reminderStore.get(pool, e.userId, e.reminderId);
      if (reminder) hub.publish(e.userId, { event: 'reminder', id: '', reminder });
    }
  };

  const connect = async () => {
    if (closed) return;
    try {
      const c = await pool.connect();
      c.on('notification', (msg) => void handle(msg).catch((err: unknown) => log('reading a proactive event failed', err)));
      c.on('error', (err) => {
        log('proactive listener connection lost', err);
        c.release(err);
        if (client === c) client = undefined;
        schedule();
      });
      await c.query(`LISTEN ${PROACTIVE_CHANNEL}`);
      if (closed) {
        c.release();
        return;
      }
      client = c;
      delay = 500;
    } catch (err) {
      log('proactive listener could not connect', err);
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
        c.release();
      }
    },
  };
}
