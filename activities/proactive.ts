/**
 * Activities of the proactive workflows (reminders, digests, nudges). Times come from the
 * workflow (`at`), so a time-skipped test and a replay record the same instants.
 */
import { notificationStore } from '../src/adapters/postgres/notification-repository';
import { inTransaction } from '../src/adapters/postgres/pool';
import { reminderStore, type ReminderRecord } from '../src/adapters/postgres/reminder-repository';
import { renderDigestTemplate, type DigestSections } from '../src/core/proactive/digest-content';
import type { NudgeTrigger } from '../src/core/proactive/nudge-triggers';
import { languageOf, type NudgeMessage } from '../src/core/proactive/nudge-wording';
import { initialState, isClosed, type ReminderState } from '../src/core/proactive/reminder-state';
import type { UserSettings } from '../src/core/proactive/settings';
import type { ServiceDeps } from '../src/services/deps';
import { gatherDigest, storeDigest } from '../src/services/digest';
import { writeDigest, type WrittenDigest } from '../src/services/digest-writer';
import { deliverNudge, loadNudgeContext } from '../src/services/nudges';
import { randomUUID } from 'node:crypto';
import type { ReminderWorkflowInput } from '../workflows/proactive-types';
import { withTypedFailures } from './failures';

function stateOf(r: ReminderRecord): ReminderState {
  return {
    reminderId: r.id,
    status: r.status,
    dueAt: r.dueAt.toISOString(),
    occurrence: r.occurrence,
    fireCount: r.fireCount,
    snoozeCount: r.snoozeCount,
    version: r.version,
    ...(r.firedAt ? { firedAt: r.firedAt.toISOString() } : {}),
    ...(r.snoozedUntil ? { snoozedUntil: r.snoozedUntil.toISOString() } : {}),
    ...(r.dismissedAt ? { dismissedAt: r.dismissedAt.toISOString() } : {}),
  };
}

export function createProactiveActivities(deps: ServiceDeps) {
  return withTypedFailures({
    /**
     * Makes sure the reminder's row exists (the API may have written it already) and tells the
     * workflow whether this occurrence was closed before: a re-run long after the first one
     * finished (beyond Temporal's retention) must not fire a dismissed reminder again. A recurring
     * reminder's next run moves the row on to its occurrence. Returns the row's version, which the
     * workflow counts on from.
     */
    async recordReminder(
      input: ReminderWorkflowInput & { at: string; version?: number },
    ): Promise<{ created: boolean; closedBefore?: ReminderState; version: number }> {
      const occurrence = input.occurrence ?? 1;
      const at = new Date(input.at);
      return inTransaction(deps.pool, async (c) => {
        const { reminder, created } = await reminderStore.insert(
          c,
          {
            id: input.reminderId,
            userId: input.userId,
            text: input.text,
            dueAt: new Date(input.dueAt),
            timeZone: input.timeZone,
            rrule: input.rrule ?? null,
            seriesStart: input.seriesStart ? new Date(input.seriesStart) : null,
            assumedTime: input.assumedTime ?? false,
            source: input.source,
            workflowId: `reminder:${input.userId}:${input.reminderId}`,
          },
          at,
        );
        // The workflow runs: the reminder reconciler leaves this row alone from now on.
        await reminderStore.markWorkflowStarted(c, input.userId, input.reminderId, at);
        if (!created && reminder.occurrence === occurrence && isClosed(reminder)) return { created, closedBefore: stateOf(reminder), version: reminder.version };
        let version = reminder.version;
        if (!created && reminder.occurrence < occurrence) {
          const moved = await reminderStore.startOccurrence(c, input.userId, initialState(input.reminderId, new Date(input.dueAt), occurrence, input.version ?? 0), at);
          if (moved) version = moved.version;
        }
        await notificationStore.announce(c, { type: 'reminder', userId: input.userId, reminderId: input.reminderId, status: 'scheduled' });
        return { created, version };
      });
    },

    /** Mirrors the workflow's state; a write older than the row's version changes and announces nothing. */
    async saveReminderState(input: { userId: string; state: ReminderState; at: string }): Promise<{ applied: boolean }> {
      return inTransaction(deps.pool, async (c) => {
        const applied = await reminderStore.applyState(c, input.userId, input.state, new Date(input.at));
        if (applied) await notificationStore.announce(c, { type: 'reminder', userId: input.userId, reminderId: input.state.reminderId, status: input.state.status });
        return { applied: applied !== undefined };
      });
    },

    /**
     * Records "fired" (unless the row already holds a newer state) and stores + announces the
     * notification in one transaction (once per firing).
     */
    async fireReminder(input: { userId: string; text: string; timeZone: string; assumedTime: boolean; state: ReminderState; at: string }): Promise<{ notificationId: string }> {
      const at = new Date(input.at);
      return inTransaction(deps.pool, async (c) => {
        const applied = await reminderStore.applyState(c, input.userId, input.state, at);
        const zh = languageOf(input.text) === 'zh';
        const { notification, created } = await notificationStore.insert(
          c,
          {
            id: randomUUID(),
            userId: input.userId,
            kind: 'reminder',
            title: zh ? '⏰ 提醒' : '⏰ Reminder',
            body: input.text,
            reminderId: input.state.reminderId,
            data: { dueAt: input.state.dueAt, occurrence: input.state.occurrence, fireCount: input.state.fireCount, timeZone: input.timeZone, assumedTime: input.assumedTime },
            idempotencyKey: `reminder:${input.state.reminderId}:${input.state.occurrence}:${input.state.fireCount}`,
          },
          at,
        );
        if (created) await notificationStore.announce(c, { type: 'notification', userId: input.userId, id: notification.id, seq: notification.seq });
        if (applied) await notificationStore.announce(c, { type: 'reminder', userId: input.userId, reminderId: input.state.reminderId, status: input.state.status });
        return { notificationId: notification.id };
      });
    },

    async gatherDigest(input: { userId: string; at: string }): Promise<{ sections: DigestSections }> {
      return { sections: await gatherDigest(deps, input.userId, new Date(input.at)) };
    },

    async writeDigest(input: { sections: DigestSections }): Promise<WrittenDigest> {
      return writeDigest(deps.config.llm, input.sections, renderDigestTemplate(input.sections));
    },

    async storeDigest(input: { userId: string; sections: DigestSections; text: string; generatedBy: 'llm' | 'template'; notify: boolean; at: string }): Promise<{ notified: boolean; notificationId?: string }> {
      return storeDigest(deps, { ...input, at: new Date(input.at) });
    },

    async loadNudgeContext(input: { userId: string; at: string }): Promise<{ settings: UserSettings; sentToday: number; triggers: NudgeTrigger[] }> {
      return loadNudgeContext(deps, input.userId, new Date(input.at));
    },

    async deliverNudge(input: { userId: string; trigger: NudgeTrigger; message: NudgeMessage; at: string }): Promise<{ delivered: boolean; reason?: string; notificationId?: string }> {
      return deliverNudge(deps, { ...input, at: new Date(input.at) });
    },
  });
}
