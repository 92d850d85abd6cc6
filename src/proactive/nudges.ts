/**
 * Proactive nudges: what could be said now (triggers), and delivering one under the user's cap
 * and opt-out, checked again inside the delivery transaction so a setting changed a moment ago
 * still wins.
 */
import { DateTime } from 'luxon';
import { inQuietHours } from '../core/proactive/nudge-policy';
import { coolingDown } from '../core/proactive/recall-nudge';
import { findNudgeTriggers, REMINDER_LOOKAHEAD_MINUTES, type NudgeTrigger } from '../core/proactive/nudge-triggers';
import type { NudgeMessage } from '../core/proactive/nudge-wording';
import type { UserSettings } from '../core/proactive/settings';
import type { ServiceDeps } from '../shared/deps';
import { userSettings } from '../account/settings';
import { randomUUID } from 'node:crypto';

function localDayStart(at: Date, timeZone: string): Date {
  return DateTime.fromJSDate(at, { zone: timeZone }).startOf('day').toJSDate();
}

export interface NudgeContext {
  settings: UserSettings;
  sentToday: number;
  triggers: NudgeTrigger[];
}

export async function loadNudgeContext(deps: Pick<ServiceDeps, 'settings' | 'notifications' | 'proactiveMemories' | 'reminders' | 'config'>, userId: string, at: Date): Promise<NudgeContext> {
  const settings = await userSettings(deps, userId);
  // Opted out: do not even read the user's memories.
  if (!settings.proactive.enabled) return { settings, sentToday: 0, triggers: [] };
  const tz = settings.timezone;
  const [sentToday, memories, reminders] = await Promise.all([
    deps.notifications.countSince({ userId, kind: 'nudge', since: localDayStart(at, tz) }),
    deps.proactiveMemories.goalsAndPainPoints({ userId }),
    deps.reminders.dueBetween({ userId, from: at, to: new Date(at.getTime() + REMINDER_LOOKAHEAD_MINUTES * 60_000) }),
  ]);
  const triggers = findNudgeTriggers({
    memories,
    reminders: reminders.map((r) => ({ id: r.id, text: r.text, dueAt: r.snoozedUntil ?? r.dueAt })),
    now: at,
    timeZone: tz,
  });
  return { settings, sentToday, triggers };
}

export async function deliverNudge(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userId: string; trigger: NudgeTrigger; message: NudgeMessage; at: Date; cooldownHours?: number },
): Promise<{ delivered: boolean; reason?: string; notificationId?: string }> {
  return deps.unitOfWork.forUser({ userId: input.userId, work: async (tx) => {
    const settings = await tx.settings.get({ userId: input.userId });
    if (!settings?.proactive.enabled) return { delivered: false, reason: 'opted-out' };
    if (inQuietHours(input.at, settings.timezone, settings.proactive.quietHours)) return { delivered: false, reason: 'quiet-hours' };
    const memoryId = input.trigger.memoryId;
    if (input.cooldownHours !== undefined && memoryId) {
      // Checked again here: another run may have nudged about the memory since the context was read.
      const last = (await tx.notifications.lastNudgedAbout({ userId: input.userId, memoryIds: [memoryId] })).get(memoryId);
      if (coolingDown(last, input.at, input.cooldownHours)) return { delivered: false, reason: 'cool-down' };
    }
    const dayStart = localDayStart(input.at, settings.timezone);
    const sent = await tx.notifications.countSince({ userId: input.userId, kind: 'nudge', since: dayStart });
    if (sent >= settings.proactive.maxPerDay) return { delivered: false, reason: 'daily-cap' };
    const date = DateTime.fromJSDate(input.at, { zone: settings.timezone }).toISODate();
    const { notification, created } = await tx.notifications.insert({
      notification: {
        id: randomUUID(),
        userId: input.userId,
        kind: 'nudge',
        title: input.message.title,
        body: input.message.body,
        reminderId: input.trigger.reminderId,
        data: { trigger: input.trigger.kind, memoryId: input.trigger.memoryId, lang: input.message.lang },
        // The same subject is brought up at most once a day.
        idempotencyKey: `nudge:${input.userId}:${date}:${input.trigger.key}`,
      },
      at: input.at,
    });
    if (!created) return { delivered: false, reason: 'already-said-today', notificationId: notification.id };
    await tx.notifications.announce({ type: 'notification', userId: input.userId, id: notification.id, seq: notification.seq });
    return { delivered: true, notificationId: notification.id };
  } });
}
