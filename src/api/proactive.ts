import type { FastifyInstance } from 'fastify';
import { syncProactiveSchedules } from '../proactive/proactive-schedules';
import { listenForProactiveEvents, NotificationHub } from '../proactive/notifications';
import type { ApiDeps } from './deps';
import { eventRoutes } from './routes/events';
import { pageRoutes } from './routes/page';
import { pageVocabularyRoutes } from './routes/page-vocabulary';
import { proactiveRoutes } from './routes/proactive';
import { reminderRoutes } from './routes/reminders';

/**
 * Proactive memory in the API, where the service speaks first: reminder, notification, settings
 * and digest routes, the live event stream, and the page with its per-user sign-in. The event
 * stream is fed by LISTEN on PostgreSQL, so notifications written by workers in other processes
 * reach this process's open pages.
 */
export async function registerProactive(app: FastifyInstance, deps: ApiDeps, onUserActive: UserActivation): Promise<void> {
  const hub = new NotificationHub();
  const listener = listenForProactiveEvents(deps, hub, (msg, err) => app.log.warn({ err }, msg));
  app.addHook('onClose', async () => listener.close());

  const sync = async (userId: string) => {
    try {
      await syncProactiveSchedules(deps, userId);
    } catch (err) {
      // The schedules may lag the stored settings: the user's next activity syncs them again.
      onUserActive.forget(userId);
      throw err;
    }
  };
  await app.register(reminderRoutes(deps, { onUserActive }));
  await app.register(proactiveRoutes(deps, { onSettingsChanged: sync }));
  await app.register(eventRoutes(deps, hub));
  await app.register(pageRoutes(deps));
  await app.register(pageVocabularyRoutes);
}

/**
 * Gives a user their digest and nudge schedules the first time this process sees them active
 * (a message, a reminder), so the daily digest needs no settings change to start. Idempotent;
 * the set only saves the two Temporal calls on later activity.
 */
export type UserActivation = ((userId: string) => Promise<void>) & { forget(userId: string): void };

export function userActivation(deps: ApiDeps): UserActivation {
  const synced = new Set<string>();
  const activate = async (userId: string) => {
    if (synced.has(userId)) return;
    await syncProactiveSchedules(deps, userId);
    if (synced.size > 50_000) synced.clear();
    synced.add(userId);
  };
  // A purged user who comes back gets their schedules again.
  return Object.assign(activate, { forget: (userId: string) => void synced.delete(userId) });
}
