import {
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createProactiveActivities } from '../../activities/proactive/proactive';
import {
  cancel,
  DEFAULT_ACK_WINDOW_SECONDS,
  dismiss,
  fire,
  initialState,
  isClosed,
  nextWake,
  reschedule,
  snooze,
  type ReminderState,
} from '../../src/core/proactive/reminder-state';
import { nextOccurrence } from '../../src/core/time/recurrence';
import { dismissSignal, reminderWorkflowId, rescheduleUpdate, snoozeSignal, stateQuery, type ReminderWorkflowInput } from '../../src/proactive/contract';
import { ReminderStatusKey, userSearchAttributes } from '../shared/search-attributes';

type Activities = ReturnType<typeof createProactiveActivities>;

// No attempt limit: a reminder must survive a database outage of any length and still fire.
const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

export { dismissSignal, reminderWorkflowId, rescheduleUpdate, snoozeSignal, stateQuery };

const MAX_AHEAD_MS = 10 * 366 * 86_400_000;

/** Inside a workflow the clock is Temporal's (deterministic, and skipped by the time-skipping server). */
const workflowNow = (): Date => new Date();

/**
 * Marks the code that keeps the reminders row in step with every change: histories recorded
 * before it replay the earlier decisions, running reminders take it up from their next decision.
 */
export const ROW_CATCHES_UP_PATCH = 'reminder-row-catches-up';

/**
 * ReminderWorkflow: one per reminder. A durable timer to the due time; "稍后" (snoozeSignal) and
 * "知道了" (dismissSignal) at any time; rescheduleUpdate moves the due time (validated, rejected
 * for past or absurd times); stateQuery answers what the page shows. When due it records the
 * firing and a notification in one activity (pushed live to open pages), then waits a while for
 * the user's answer. Recurring reminders continue as new with their next occurrence; cancelling
 * the workflow (DELETE in the API) ends the series. Status is mirrored in the ReminderStatus
 * search attribute and the reminders table.
 *
 * The workflow is the reminders row's only writer after creation. Every change bumps
 * `state.version`; every write carries it and applies only over an older row, and a change that
 * comes while a write is in flight is written right after it, before the loop decides anything
 * (so the row always ends at the workflow's final state, in order).
 */
export async function reminderWorkflow(input: ReminderWorkflowInput): Promise<ReminderState> {
  const occurrence = input.occurrence ?? 1;
  const ackWindow = input.ackWindowSeconds ?? DEFAULT_ACK_WINDOW_SECONDS;
  // A series' next occurrence is one change on from where the previous run ended.
  const base = input.stateVersion === undefined ? 0 : input.stateVersion + 1;
  let state = initialState(input.reminderId, new Date(input.dueAt), occurrence, base);
  /** The highest version the reminders row is known to hold. */
  let saved = base;
  const change = (next: ReminderState) => {
    if (next === state) return;
    state = { ...next, version: state.version + 1 };
  };

  setHandler(stateQuery, () => state);
  setHandler(snoozeSignal, ({ seconds }) => change(snooze(state, seconds, workflowNow())));
  setHandler(dismissSignal, () => change(dismiss(state, workflowNow())));
  setHandler(
    rescheduleUpdate,
    ({ dueAt }) => {
      change(reschedule(state, new Date(dueAt)));
      return state;
    },
    {
      validator: ({ dueAt }) => {
        const at = new Date(dueAt);
        const now = workflowNow().getTime();
        if (Number.isNaN(at.getTime())) throw new Error(`dueAt is not a valid time: ${dueAt}`);
        if (at.getTime() <= now) throw new Error('dueAt must be in the future');
        if (at.getTime() - now > MAX_AHEAD_MS) throw new Error('dueAt must be within 10 years');
        if (isClosed(state)) throw new Error(`reminder is ${state.status}`);
      },
    },
  );

  const saveOnce = async () => {
    const written = state;
    upsertSearchAttributes([{ key: ReminderStatusKey, value: written.status }]);
    await acts.saveReminderState({ userId: input.userId, state: written, at: workflowNow().toISOString() });
    if (written.version > saved) saved = written.version;
  };
  const persist = async () => {
    if (saved === state.version) return;
    await saveOnce();
    // A signal handled while that write was in flight (a dismiss right after a snooze) is written
    // now: deciding on the newer state first (closed → end) would leave the row one change behind.
    while (saved < state.version && patched(ROW_CATCHES_UP_PATCH)) await saveOnce();
  };

  const nextInSeries = (after: Date): Date | undefined =>
    input.rrule ? nextOccurrence(input.rrule, after, input.timeZone, input.seriesStart ? { dtstart: new Date(input.seriesStart) } : {}) : undefined;

  const loop = async (): Promise<void> => {
    for (;;) {
      await persist();
      if (isClosed(state)) return;
      const wake = nextWake(state, ackWindow, nextInSeries(new Date(state.dueAt)));
      if (!wake) return;
      const seen = state.version;
      const wait = wake.at.getTime() - workflowNow().getTime();
      const interrupted = wait > 0 ? await condition(() => state.version !== seen, wait, { summary: `${wake.reason} at ${wake.at.toISOString()}` }) : false;
      if (interrupted) continue;
      // Should the timer win the race against a signal handled in the same activation (the SDK
      // handles signals first today), the signal still wins: the next wake follows the new state.
      if (state.version !== seen && patched(ROW_CATCHES_UP_PATCH)) continue;
      if (wake.reason === 'ack-window-over') return;
      change(fire(state, workflowNow()));
      upsertSearchAttributes([{ key: ReminderStatusKey, value: state.status }]);
      const firedVersion = state.version;
      await acts.fireReminder({ userId: input.userId, text: input.text, timeZone: input.timeZone, assumedTime: input.assumedTime ?? false, state, at: workflowNow().toISOString() });
      // fireReminder wrote the fired state; a signal that arrived while it ran is saved by the next persist().
      if (saved < firedVersion) saved = firedVersion;
    }
  };

  upsertSearchAttributes([...userSearchAttributes(input.userId), { key: ReminderStatusKey, value: state.status }]);
  let recorded: { created: boolean; closedBefore?: ReminderState; version?: number } | undefined;
  try {
    recorded = await acts.recordReminder({ ...input, occurrence, at: workflowNow().toISOString(), version: base });
    if (recorded.closedBefore) {
      log.info('reminder was closed by an earlier run; not firing again', { status: recorded.closedBefore.status });
      upsertSearchAttributes([{ key: ReminderStatusKey, value: recorded.closedBefore.status }]);
      return recorded.closedBefore;
    }
    // The row can be ahead of this run's count (a series continued by a worker from before
    // versions, a reset run): count on from the row's version and write this run's state over it.
    const ahead = (recorded.version ?? base) - base;
    if (ahead > 0) {
      state = { ...state, version: state.version + ahead + 1 };
      saved = base + ahead;
    }
    await loop();
  } catch (err) {
    // A cancel that comes while the row is still being recorded is recorded too (histories from
    // before the patch ended without it).
    if (isCancellation(err) && (recorded !== undefined || patched(ROW_CATCHES_UP_PATCH))) {
      await CancellationScope.nonCancellable(async () => {
        change(cancel(state, workflowNow()));
        await persist();
      });
    }
    throw err;
  }

  if (input.rrule) {
    const after = new Date(Math.max(workflowNow().getTime(), new Date(state.dueAt).getTime()));
    const next = nextInSeries(after);
    if (next) {
      log.info('recurring reminder continues with its next occurrence', { next: next.toISOString(), occurrence: occurrence + 1 });
      await continueAsNew<typeof reminderWorkflow>({ ...input, dueAt: next.toISOString(), occurrence: occurrence + 1, stateVersion: state.version });
    }
  }
  return state;
}
