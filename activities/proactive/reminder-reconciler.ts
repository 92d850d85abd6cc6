import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ServiceDeps } from '../../src/shared/deps';
import { reconcileReminders, type ReminderReconcileResult } from '../../src/proactive/reminder-reconciler';
import { asActivity } from '../shared/as-activity';

export type { ReminderReconcileResult };

/** The reminder reconciler's activity (workflows/proactive/reminder-reconciler.ts): it repairs the reminders' own state. */
export function createReminderReconcilerActivities(deps: Pick<ServiceDeps, 'reminders' | 'config'>, opts: { client: Client; taskQueue: string }) {
  return {
    /**
     * Starts the workflow of open reminders whose row was committed but whose workflow never ran
     * (the process died between the two), after `graceSeconds` (src/proactive/reminder-reconciler.ts).
     */
    async reconcileReminders(input: { limit: number; graceSeconds: number }): Promise<ReminderReconcileResult> {
      return asActivity(() =>
        reconcileReminders(
          { reminders: deps.reminders, temporal: opts.client, taskQueue: opts.taskQueue, config: deps.config },
          { limit: input.limit, graceSeconds: input.graceSeconds, onProgress: (r) => Context.current().heartbeat(r) },
        ),
      );
    },
  };
}
