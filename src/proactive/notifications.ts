/**
 * Live delivery of proactive events to open pages. Workers write notifications to PostgreSQL and
 * announce them in the same transaction; every API process hears the announcements through the
 * ProactiveEventFeed port (LISTEN, src/adapters/postgres/proactive-listener.ts) and fans events out
 * to its Server-Sent-Event subscribers through an in-process hub. Worker and API may thus run in
 * different processes (or machines) and a page still hears about a reminder the moment it fires.
 */
import { randomUUID } from 'node:crypto';
import type { NewNotification, NotificationKind, NotificationRecord, ProactiveEventFeed, ReminderRecord } from '../core/ports/proactive';
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

/** What the live event stream reads: the two ports, and the feed of announcements (PostgreSQL's LISTEN, wired in src/runtime.ts). */
export type ProactiveListenerDeps = Pick<ServiceDeps, 'notifications' | 'reminders'> & { proactiveEvents: ProactiveEventFeed };

export interface ProactiveListener {
  close(): Promise<void>;
}

/**
 * Republishes each announced event to `hub`, read back through the ports (only for users someone
 * is subscribed to). The feed reconnects on its own when it drops; events missed meanwhile are
 * recovered by the page's Last-Event-ID resume.
 */
export function listenForProactiveEvents(
  deps: ProactiveListenerDeps,
  hub: NotificationHub,
  log: (msg: string, err?: unknown) => void = () => {},
): ProactiveListener {
  return deps.proactiveEvents.listen({
    log,
    onEvent: async (e) => {
      if (hub.subscriberCount(e.userId) === 0) return;
      if (e.type === 'notification') {
        const notification = await deps.notifications.get({ userId: e.userId, id: e.id });
        if (notification) hub.publish(e.userId, { event: 'notification', id: String(notification.seq), notification });
      } else {
        const reminder = await deps.reminders.get({ userId: e.userId, id: e.reminderId });
        if (reminder) hub.publish(e.userId, { event: 'reminder', id: '', reminder });
      }
    },
  });
}
