import { proxyActivities } from '@temporalio/workflow';
import type { createReminderReconcilerActivities, ReminderReconcileResult } from '../../activities/proactive/reminder-reconciler';

type Activities = ReturnType<typeof createReminderReconcilerActivities>;

// The schedule runs this every minute; a failed tick is simply the next tick's work.
const { reconcileReminders } = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '1m',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
});

export interface ReminderReconcilerInput {
  /** Reminders per tick (default 100); the rest wait for the next tick, oldest first. */
  limit?: number;
  /** Age of a row before its missing workflow is started (default 60 s): a start in flight finishes first. */
  graceSeconds?: number;
}

/**
 * Reminder reconciler (Schedule `reconcile:reminders:<taskQueue>`): open reminders whose row was
 * committed but whose workflow never ran get it started, once, under the reminder's workflow id.
 */
export async function reminderReconcilerWorkflow(input: ReminderReconcilerInput = {}): Promise<ReminderReconcileResult> {
  return reconcileReminders({ limit: input.limit ?? 100, graceSeconds: input.graceSeconds ?? 60 });
}
