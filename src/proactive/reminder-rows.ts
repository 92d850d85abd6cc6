/**
 * The reminders rows as the ReminderWorkflow writes them: created once, moved on to the next
 * occurrence of a series, and mirroring the workflow's state — each write announced to the open
 * pages in the same transaction. Times come from the workflow (`at`), so a time-skipped test and
 * a replay record the same instants.
 */
import { randomUUID } from 'node:crypto';
import { languageOf } from '../core/proactive/nudge-wording';
import { initialState, isClosed, type ReminderState } from '../core/proactive/reminder-state';
import type { ReminderRecord } from '../core/ports/proactive';
import type { ReminderWorkflowInput } from './contract';
import type { ServiceDeps } from '../shared/deps';

/** The workflow's view of a stored reminder. */
export function stateOf(r: ReminderRecord): ReminderState {
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

/**
 * Makes sure the reminder's row exists (the API may have written it already) and tells the
 * workflow whether this occurrence was closed before: a re-run long after the first one finished
 * (beyond Temporal's retention) must not fire a dismissed reminder again. A recurring reminder's
 * next run moves the row on to its occurrence. Returns the row's version, which the workflow
 * counts on from.
 */
export async function recordReminder(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: ReminderWorkflowInput & { at: Date; version?: number },
): Promise<{ created: boolean; closedBefore?: ReminderState; version: number }> {
  const occurrence = input.occurrence ?? 1;
  const { at } = input;
  return deps.unitOfWork.run({
    work: async (tx) => {
      const { reminder, created } = await tx.reminders.insert({
        reminder: {
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
      });
      // The workflow runs: the reminder reconciler leaves this row alone from now on.
      await tx.reminders.markWorkflowStarted({ userId: input.userId, id: input.reminderId, at });
      if (!created && reminder.occurrence === occurrence && isClosed(reminder)) return { created, closedBefore: stateOf(reminder), version: reminder.version };
      let version = reminder.version;
      if (!created && reminder.occurrence < occurrence) {
        const moved = await tx.reminders.startOccurrence({ userId: input.userId, state: initialState(input.reminderId, new Date(input.dueAt), occurrence, input.version ?? 0), at });
        if (moved) version = moved.version;
      }
      await tx.notifications.announce({ type: 'reminder', userId: input.userId, reminderId: input.reminderId, status: 'scheduled' });
      return { created, version };
    },
  });
}

/** Mirrors the workflow's state; a write older than the row's version changes and announces nothing. */
export async function saveReminderState(deps: Pick<ServiceDeps, 'unitOfWork'>, input: { userId: string; state: ReminderState; at: Date }): Promise<{ applied: boolean }> {
  return deps.unitOfWork.run({
    work: async (tx) => {
      const applied = await tx.reminders.applyState(input);
      if (applied) await tx.notifications.announce({ type: 'reminder', userId: input.userId, reminderId: input.state.reminderId, status: input.state.status });
      return { applied: applied !== undefined };
    },
  });
}

/**
 * Records "fired" (unless the row already holds a newer state) and stores + announces the
 * notification in one transaction (once per firing).
 */
export async function fireReminder(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userId: string; text: string; timeZone: string; assumedTime: boolean; state: ReminderState; at: Date },
): Promise<{ notificationId: string }> {
  const { userId, state, at } = input;
  return deps.unitOfWork.run({
    work: async (tx) => {
      const applied = await tx.reminders.applyState({ userId, state, at });
      const zh = languageOf(input.text) === 'zh';
      const { notification, created } = await tx.notifications.insert({
        notification: {
          id: randomUUID(),
          userId,
          kind: 'reminder',
          title: zh ? '⏰ 提醒' : '⏰ Reminder',
          body: input.text,
          reminderId: state.reminderId,
          data: { dueAt: state.dueAt, occurrence: state.occurrence, fireCount: state.fireCount, timeZone: input.timeZone, assumedTime: input.assumedTime },
          idempotencyKey: `reminder:${state.reminderId}:${state.occurrence}:${state.fireCount}`,
        },
        at,
      });
      if (created) await tx.notifications.announce({ type: 'notification', userId, id: notification.id, seq: notification.seq });
      if (applied) await tx.notifications.announce({ type: 'reminder', userId, reminderId: state.reminderId, status: state.status });
      return { notificationId: notification.id };
    },
  });
}
