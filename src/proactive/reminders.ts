/**
 * Reminders through the API: validation in the user's timezone, the row, and the workflow. The
 * row is written before the workflow starts so a list right after creation shows it; the
 * workflow is the single writer from then on (fired, snoozed, dismissed, cancelled).
 *
 * The user's answers go to the workflow (snooze and dismiss as signals, cancel as a cancellation,
 * reschedule as an update) and are answered once the reminders row shows the workflow's state
 * after them — read-your-writes for the list and the page — or, when that takes longer than
 * `reminderAcceptTimeoutMs`, with "accepted" and the workflow id: the change happens anyway.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowUpdateStage, type Client } from '@temporalio/client';
import { DateTime } from 'luxon';
import type { AppConfig } from '../config';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { uuidFromKey } from '../shared/ids';
import type { ReminderRecord } from '../core/ports/proactive';
import { isClosed, type ReminderState } from '../core/proactive/reminder-state';
import { nextOccurrence, validateRrule } from '../core/time/recurrence';
import { dismissSignal, ProactiveWorkflows, reminderWorkflowId, rescheduleUpdate, snoozeSignal, stateQuery, type ReminderWorkflow, type ReminderWorkflowInput } from './contract';
import { ReminderStatusKey, userSearchAttributes } from '../../workflows/shared/search-attributes';
import type { ServiceDeps } from '../shared/deps';
import { userTimeZone } from '../account/settings';
import { isValidTimeZone } from '../core/time/zones';

export interface ReminderDeps extends Pick<ServiceDeps, 'reminders' | 'settings'> {
  temporal: Client;
  taskQueue: string;
  config: Pick<AppConfig, 'proactive'>;
}

export interface CreateReminderRequest {
  userId: string;
  text: string;
  dueAt: string;
  timezone?: string;
  rrule?: string;
  requestId?: string;
}

const MAX_AHEAD_YEARS = 10;

function invalid(message: string, field: string, extra: Record<string, unknown> = {}): MemoryServiceError {
  return new MemoryServiceError(ErrorCode.validationFailed, message, { field, ...extra });
}

/** Resolves a request's due time in the user's zone and checks it; throws validation_failed. */
export async function resolveDue(
  deps: Pick<ServiceDeps, 'settings'>,
  req: CreateReminderRequest,
  now: Date,
): Promise<{ timeZone: string; dueAt: Date; seriesStart?: Date }> {
  const timeZone = req.timezone ?? (await userTimeZone(deps, req.userId));
  if (!isValidTimeZone(timeZone)) throw invalid(`unknown IANA timezone "${timeZone}"`, 'timezone');
  // A dueAt without an offset ("2026-12-01T15:00") is wall-clock time in the reminder's zone.
  const parsed = DateTime.fromISO(req.dueAt, { zone: timeZone });
  if (!parsed.isValid) throw invalid(`dueAt is not an ISO 8601 time: ${parsed.invalidExplanation ?? req.dueAt}`, 'dueAt');
  const due = parsed.toJSDate();
  const horizon = DateTime.fromJSDate(now).plus({ years: MAX_AHEAD_YEARS }).toJSDate();
  if (due > horizon) throw invalid(`dueAt must be within ${MAX_AHEAD_YEARS} years`, 'dueAt');
  if (req.rrule !== undefined) {
    const check = validateRrule(req.rrule);
    if (!check.ok) throw invalid(`invalid rrule: ${check.reason}`, 'rrule');
    // The series starts at dueAt; a start in the past means "from the next occurrence on".
    const first = due > now ? due : nextOccurrence(req.rrule, now, timeZone, { dtstart: due });
    if (!first) throw invalid('the rule has no occurrence after now', 'rrule');
    return { timeZone, dueAt: first, seriesStart: due };
  }
  if (due <= now) throw invalid('dueAt is in the past', 'dueAt', { dueAt: due.toISOString(), now: now.toISOString() });
  return { timeZone, dueAt: due };
}

/** Creates (or, for a repeated requestId, returns) a reminder and starts its workflow. */
export async function createReminder(deps: ReminderDeps, req: CreateReminderRequest, now: Date): Promise<{ reminder: ReminderRecord; created: boolean }> {
  const reminderId = req.requestId ? uuidFromKey(`reminder:api:${req.userId}:${req.requestId}`) : randomUUID();
  const workflowId = reminderWorkflowId(req.userId, reminderId);
  if (req.requestId) {
    // A retry: the first attempt's row is the reminder, even when its due time has passed since
    // (the retry came late); it is not validated against the clock again.
    const existing = await deps.reminders.get({ userId: req.userId, id: reminderId });
    if (existing) {
      await ensureReminderWorkflow(deps, existing);
      return { reminder: existing, created: false };
    }
  }
  const { timeZone, dueAt, seriesStart } = await resolveDue(deps, req, now);
  const source = { via: 'api' as const, ...(req.requestId ? { requestId: req.requestId } : {}) };
  const { reminder, created } = await deps.reminders.insert({
    reminder: { id: reminderId, userId: req.userId, text: req.text, dueAt, timeZone, rrule: req.rrule ?? null, seriesStart: seriesStart ?? null, assumedTime: false, source, workflowId },
    at: now,
  });
  await ensureReminderWorkflow(deps, reminder, { removeOnFailure: created });
  return { reminder, created };
}

/**
 * Starts the reminder's workflow unless it exists (running or closed). A row still `scheduled`
 * that never fired may have lost its workflow: the attempt that inserted it died (API killed,
 * Temporal down and then PostgreSQL too, so the row could not be removed) before the start, and the
 * client's retry found the row. Before, that retry answered 200 and the reminder never fired.
 * `removeOnFailure`: this call inserted the row, so a start that fails takes it out again.
 */
async function ensureReminderWorkflow(deps: ReminderDeps, reminder: ReminderRecord, opts: { removeOnFailure?: boolean } = {}): Promise<void> {
  if (!opts.removeOnFailure && (reminder.status !== 'scheduled' || reminder.fireCount > 0)) return;
  try {
    await startReminderWorkflow(deps, reminder);
  } catch (err) {
    // Without its workflow the row would claim a reminder that never fires.
    if (opts.removeOnFailure) await deps.reminders.remove({ userId: reminder.userId, id: reminder.id });
    throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable: reminder not created', { workflowId: reminder.workflowId }, { cause: err });
  }
}

/**
 * Starts the row's ReminderWorkflow under its own id, once ever: an id that exists, running or
 * closed (within retention), is rejected as a duplicate and answered `existed` — never a second
 * run that would fire again. A due time already past fires as soon as the workflow runs.
 * Other failures (Temporal unreachable) are thrown as they are.
 */
export async function startReminderWorkflow(deps: Pick<ReminderDeps, 'temporal' | 'taskQueue' | 'config'>, reminder: ReminderRecord): Promise<'started' | 'existed'> {
  const input: ReminderWorkflowInput = {
    userId: reminder.userId,
    reminderId: reminder.id,
    text: reminder.text,
    dueAt: reminder.dueAt.toISOString(),
    timeZone: reminder.timeZone,
    ...(reminder.rrule && reminder.seriesStart ? { rrule: reminder.rrule, seriesStart: reminder.seriesStart.toISOString() } : {}),
    source: reminder.source,
    ackWindowSeconds: deps.config.proactive.reminderAckSeconds,
  };
  try {
    await deps.temporal.workflow.start<ReminderWorkflow>(ProactiveWorkflows.reminder, {
      taskQueue: deps.taskQueue,
      workflowId: reminder.workflowId,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        ...userSearchAttributes(reminder.userId),
        { key: ReminderStatusKey, value: 'scheduled' },
      ],
      staticSummary: `Reminder due ${input.dueAt} (${input.timeZone})${input.rrule ? `, repeats ${input.rrule}` : ''}`,
    });
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'existed';
    throw err;
  }
}

async function openReminder(deps: ReminderDeps, userId: string, id: string): Promise<ReminderRecord> {
  const reminder = await deps.reminders.get({ userId, id });
  if (!reminder) throw new MemoryServiceError(ErrorCode.notFound, 'reminder not found', { id });
  if (isClosed(reminder)) throw new MemoryServiceError(ErrorCode.invalidState, `reminder is ${reminder.status}`, { id, status: reminder.status });
  return reminder;
}

function closedOrUnavailable(err: unknown, id: string): MemoryServiceError {
  if (err instanceof WorkflowNotFoundError) return new MemoryServiceError(ErrorCode.invalidState, 'reminder is no longer open', { id }, { cause: err });
  return new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable', { id }, { cause: err });
}

/**
 * How an answer to a reminder ended: `settled` — the workflow took it and the reminders row
 * already shows the workflow's state after it (a list or GET now cannot show anything older);
 * otherwise the workflow has it (a signal is durable once sent) but the row did not follow in time.
 */
export type ReminderOutcome = { settled: true; reminder: ReminderRecord; state: ReminderState } | { settled: false; reminder: ReminderRecord };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function deadlineOf(deps: ReminderDeps): number {
  return Date.now() + deps.config.proactive.reminderAcceptTimeoutMs;
}

/** Reads the row until it holds `version` or a newer one; undefined when the deadline passes first. */
async function rowAtLeast(deps: ReminderDeps, userId: string, id: string, version: number, deadline: number): Promise<ReminderRecord | undefined> {
  let pause = 10;
  for (;;) {
    const row = await deps.reminders.get({ userId, id });
    if (row && row.version >= version) return row;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, 100);
  }
}

/**
 * The workflow's state as it is now. Temporal answers a query only after every event recorded
 * before it (our signal, our cancel request) has been handled, so this is the state that includes
 * the caller's change. Undefined when no answer comes before the deadline (no worker running).
 */
async function workflowState(deps: ReminderDeps, workflowId: string, deadline: number): Promise<ReminderState | undefined> {
  try {
    return await deps.temporal.connection.withDeadline(deadline, () => deps.temporal.workflow.getHandle(workflowId).query(stateQuery));
  } catch {
    // Timed out or no worker to answer: the change is recorded in Temporal; the caller gets 202.
    return undefined;
  }
}

/**
 * After a signal or cancel: learns the workflow's version after it and waits for the row to get
 * there. `refuse` names why the change could not apply to the state found (the reminder closed
 * first); the caller then gets 409 — after the row caught up, so a GET agrees.
 */
async function settle(
  deps: ReminderDeps,
  reminder: ReminderRecord,
  deadline: number,
  refuse: (state: ReminderState) => string | undefined,
): Promise<ReminderOutcome> {
  const state = await workflowState(deps, reminder.workflowId, deadline);
  if (!state) return { settled: false, reminder };
  const row = await rowAtLeast(deps, reminder.userId, reminder.id, state.version, deadline);
  const why = refuse(state);
  if (why) throw new MemoryServiceError(ErrorCode.invalidState, why, { id: reminder.id, status: state.status });
  return row ? { settled: true, reminder: row, state } : { settled: false, reminder };
}

/** "稍后": signals the reminder's workflow to fire again in `seconds`, then waits for the row to show it. */
export async function snoozeReminder(deps: ReminderDeps, userId: string, id: string, seconds: number): Promise<ReminderOutcome> {
  const deadline = deadlineOf(deps);
  const reminder = await openReminder(deps, userId, id);
  try {
    await deps.temporal.connection.withDeadline(deadline, () => deps.temporal.workflow.getHandle(reminder.workflowId).signal(snoozeSignal, { seconds }));
  } catch (err) {
    throw closedOrUnavailable(err, id);
  }
  return settle(deps, reminder, deadline, (s) => (isClosed(s) ? `reminder is ${s.status}` : undefined));
}

/** "知道了": signals the reminder's workflow that this occurrence is done, then waits for the row to show it. */
export async function dismissReminder(deps: ReminderDeps, userId: string, id: string): Promise<ReminderOutcome> {
  const deadline = deadlineOf(deps);
  const reminder = await openReminder(deps, userId, id);
  try {
    await deps.temporal.connection.withDeadline(deadline, () => deps.temporal.workflow.getHandle(reminder.workflowId).signal(dismissSignal, {}));
  } catch (err) {
    throw closedOrUnavailable(err, id);
  }
  return settle(deps, reminder, deadline, (s) => (s.status === 'cancelled' ? 'reminder is cancelled' : undefined));
}

/** Cancels the reminder (and, for a recurring one, the whole series), then waits for the row to show it. */
export async function cancelReminder(deps: ReminderDeps, userId: string, id: string): Promise<ReminderOutcome> {
  const deadline = deadlineOf(deps);
  const reminder = await openReminder(deps, userId, id);
  try {
    await deps.temporal.connection.withDeadline(deadline, () => deps.temporal.workflow.getHandle(reminder.workflowId).cancel());
  } catch (err) {
    throw closedOrUnavailable(err, id);
  }
  return settle(deps, reminder, deadline, (s) => (s.status === 'dismissed' ? 'reminder is dismissed' : undefined));
}

/**
 * Moves the due time through the workflow's validated update, then waits for the row to show the
 * workflow's new state. Not accepted by the workflow before the deadline: 503 (nothing recorded
 * that would apply it later); accepted but the row behind: not settled (202).
 */
export async function rescheduleReminder(deps: ReminderDeps, userId: string, id: string, dueAt: string): Promise<ReminderOutcome> {
  const deadline = deadlineOf(deps);
  const reminder = await openReminder(deps, userId, id);
  const parsed = DateTime.fromISO(dueAt, { zone: reminder.timeZone });
  if (!parsed.isValid) throw invalid('dueAt is not an ISO 8601 time', 'dueAt');
  const handle = deps.temporal.workflow.getHandle(reminder.workflowId);
  let state: ReminderState | undefined;
  try {
    const update = await deps.temporal.connection.withDeadline(deadline, () =>
      handle.startUpdate(rescheduleUpdate, { args: [{ dueAt: parsed.toUTC().toISO()! }], waitForStage: WorkflowUpdateStage.ACCEPTED }),
    );
    // Accepted: the update is in the workflow's history. Its result normally comes with it.
    state = await deps.temporal.connection.withDeadline(deadline, () => update.result()).catch((err: unknown) => {
      if (err instanceof WorkflowUpdateFailedError) throw err;
      return undefined;
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause instanceof Error ? err.cause.message : err.message;
      throw new MemoryServiceError(ErrorCode.validationFailed, `reschedule refused: ${cause}`, { id, field: 'dueAt' }, { cause: err });
    }
    throw closedOrUnavailable(err, id);
  }
  if (!state) return { settled: false, reminder };
  const row = await rowAtLeast(deps, userId, id, state.version, deadline);
  return row ? { settled: true, reminder: row, state } : { settled: false, reminder };
}

/** The user's reminders, newest due first. */
export async function listReminders(deps: Pick<ServiceDeps, 'reminders'>, input: { userId: string; status?: ReminderRecord['status']; limit: number }): Promise<ReminderRecord[]> {
  return deps.reminders.list(input);
}

/** One reminder of the user; not_found otherwise. */
export async function getReminder(deps: Pick<ServiceDeps, 'reminders'>, input: { userId: string; id: string }): Promise<ReminderRecord> {
  const reminder = await deps.reminders.get(input);
  if (!reminder) throw new MemoryServiceError(ErrorCode.notFound, 'reminder not found', { id: input.id });
  return reminder;
}
