/**
 * The reminder reconciler (docs/reliability.md). The API commits a reminder's row before it starts
 * the reminder's workflow; a process that dies between the two leaves an open row that nothing
 * fires unless the client retries. Each pass takes the oldest open rows whose workflow was never
 * seen to run (the workflow marks its row in its first step) and that are older than a grace
 * period — so a start still in flight is not raced — and starts their workflows under the
 * documented id. The start rejects an id that exists, so a reminder fires once: never twice, and
 * a due time that passed meanwhile fires as soon as its workflow runs.
 */
import type { ReminderDeps } from './reminders';
import { startReminderWorkflow } from './reminders';

export interface ReminderReconcileResult {
  /** Open rows found without a started workflow. */
  found: number;
  /** Workflows this pass started. */
  started: number;
  /** Rows whose workflow existed already (only marked). */
  existed: number;
  /**
   * Starts that failed: the rows come back on a later pass, behind the rows not yet tried (a row
   * whose start fails for a reason of its own never blocks the others).
   */
  failed: number;
}

export async function reconcileReminders(
  deps: Pick<ReminderDeps, 'reminders' | 'temporal' | 'taskQueue' | 'config'>,
  opts: { limit: number; graceSeconds: number; now?: Date; onProgress?: (r: ReminderReconcileResult) => void },
): Promise<ReminderReconcileResult> {
  const now = opts.now ?? new Date();
  const rows = await deps.reminders.unstarted({ createdBefore: new Date(now.getTime() - opts.graceSeconds * 1000), limit: opts.limit });
  const result: ReminderReconcileResult = { found: rows.length, started: 0, existed: 0, failed: 0 };
  for (const reminder of rows) {
    try {
      // Keyed by the row's own user: its workflow id, search attributes and payload key.
      const outcome = await startReminderWorkflow(deps, reminder);
      result[outcome]++;
      await deps.reminders.markWorkflowStarted({ userId: reminder.userId, id: reminder.id, at: new Date() });
    } catch (err) {
      result.failed++;
      // Best effort: with PostgreSQL gone too, the row simply keeps its place until next time.
      await deps.reminders
        .markWorkflowStartFailed({ userId: reminder.userId, id: reminder.id, at: new Date(), error: err instanceof Error ? err.message : String(err) })
        .catch(() => undefined);
    }
    opts.onProgress?.(result);
  }
  return result;
}
