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
import { isGrpcServiceError, WorkflowUpdateFailedError, WorkflowUpdateStage, type Client, type WorkflowHandle } from '@temporalio/client';
import { DateTime } from 'luxon';
import type { AppConfig } from '../config';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { uuidFromKey } from '../shared/ids';
import type { ReminderRecord, ReminderSource } from '../core/ports/proactive';
import { isClosed, type ReminderState } from '../core/proactive/reminder-state';
import { nextOccurrence, validateRrule } from '../core/time/recurrence';
import { dismissSignal, ProactiveWorkflows, reminderWorkflowId, rescheduleUpdate, snoozeSignal, stateQuery, type ReminderWorkflow, type ReminderWorkflowInput } from './contract';
import { ReminderStatusKey, userSearchAttributes } from '../../workflows/shared/search-attributes';
import type { ServiceDeps } from '../shared/deps';
import { userTimeZone } from '../account/settings';
import { canonicalTimeZone, isValidTimeZone } from '../core/time/zones';
import { causeChain } from '../shared/workflow-failures';

export interface ReminderDeps extends Pick<ServiceDeps, 'reminders' | 'settings'> {
  temporal: Client;
  taskQueue: string;
  /** REMINDER_ACCEPT_TIMEOUT_MS for the answers; TEMPORAL_CALL_TIMEOUT_MS for the create's calls (docs/proactive.md). */
  config: Pick<AppConfig, 'proactive'> & { reliability: Pick<AppConfig['reliability'], 'temporalCallMs'> };
}

export interface CreateReminderRequest {
  userId: string;
  text: string;
  dueAt: string;
  timezone?: string;
  rrule?: string;
  requestId?: string;
}

/**
 * `pending`: the row is stored and its start was sent, but Temporal did not answer before the
 * deadline. The start may still land; if it never does, the reminder reconciler starts the
 * workflow under the same id, so the reminder fires once either way.
 */
export interface CreateReminderResult {
  reminder: ReminderRecord;
  created: boolean;
  pending: boolean;
}

const MAX_AHEAD_YEARS = 10;

function invalid(message: string, field: string, extra: Record<string, unknown> = {}): MemoryServiceError {
  return new MemoryServiceError(ErrorCode.validationFailed, message, { field, ...extra });
}

/** The zone as the create stores it: the request's, else the user's, spelled as tzdata does. */
function requestZone(zone: string): string {
  if (!isValidTimeZone(zone)) throw invalid(`unknown IANA timezone "${zone}"`, 'timezone');
  return canonicalTimeZone(zone);
}

/** Resolves a request's due time in the user's zone and checks it; throws validation_failed. */
export async function resolveDue(
  deps: Pick<ServiceDeps, 'settings'>,
  req: CreateReminderRequest,
  now: Date,
): Promise<{ timeZone: string; dueAt: Date; seriesStart?: Date; requested: Date }> {
  const timeZone = requestZone(req.timezone ?? (await userTimeZone(deps, req.userId)));
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
    return { timeZone, dueAt: first, seriesStart: due, requested: due };
  }
  if (due <= now) throw invalid('dueAt is in the past', 'dueAt', { dueAt: due.toISOString(), now: now.toISOString() });
  return { timeZone, dueAt: due, requested: due };
}

/**
 * The instant the create asked for (rows from before `requestedDueAt`: the series start, else the
 * due time). A reschedule moves the row's `dueAt`, so a retry of the create is compared with this,
 * not with the row's current due time.
 */
function requestedDueOf(reminder: ReminderRecord): Date {
  const recorded = reminder.source.requestedDueAt;
  return recorded ? new Date(recorded) : (reminder.seriesStart ?? reminder.dueAt);
}

/**
 * The field in which a request under an existing reminder's requestId differs from the request
 * that created it, after the create's own normalisation (zone spelled as tzdata does, dueAt
 * read as an instant in that zone); undefined for the same request. A retry without `timezone`
 * means the zone the reminder was created in, so sending the same body again is always the same
 * request, even after the user changed their timezone setting.
 */
function differingField(reminder: ReminderRecord, req: CreateReminderRequest): string | undefined {
  if (req.text !== reminder.text) return 'text';
  if ((req.rrule ?? null) !== reminder.rrule) return 'rrule';
  const stored = canonicalTimeZone(reminder.timeZone);
  if (req.timezone !== undefined && (!isValidTimeZone(req.timezone) || canonicalTimeZone(req.timezone) !== stored)) return 'timezone';
  const due = DateTime.fromISO(req.dueAt, { zone: stored });
  if (!due.isValid || due.toMillis() !== requestedDueOf(reminder).getTime()) return 'dueAt';
  return undefined;
}

/**
 * Creates (or, for a repeated requestId with the same body, returns) a reminder and starts its
 * workflow. The same requestId with another body is `request_id_reused` and changes nothing.
 *
 * Every Temporal call shares one deadline, TEMPORAL_CALL_TIMEOUT_MS. Temporal is asked to answer
 * before the row is written: when it does not (down, cut off, hung), nothing is stored and the
 * answer is 503. Once the start is sent, the row stays whatever happens: a start that gets no
 * answer may still land after the deadline, so taking the row out then could leave a workflow
 * firing a reminder the client was told does not exist. The answer is `pending` instead, and the
 * row's workflow id, fixed by the row, makes the late start and the reconciler's start one run.
 */
export async function createReminder(deps: ReminderDeps, req: CreateReminderRequest, now: Date): Promise<CreateReminderResult> {
  const deadline = Date.now() + deps.config.reliability.temporalCallMs;
  const reminderId = req.requestId ? uuidFromKey(`reminder:api:${req.userId}:${req.requestId}`) : randomUUID();
  const workflowId = reminderWorkflowId(req.userId, reminderId);
  if (req.requestId) {
    const existing = await deps.reminders.get({ userId: req.userId, id: reminderId });
    if (existing) return retried(deps, existing, req, deadline);
  }
  const { timeZone, dueAt, seriesStart, requested } = await resolveDue(deps, req, now);
  if (!(await temporalAnswers(deps, deadline))) {
    throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable: reminder not created', { workflowId });
  }
  const source: ReminderSource = { via: 'api', ...(req.requestId ? { requestId: req.requestId, requestedDueAt: requested.toISOString() } : {}) };
  const { reminder, created } = await deps.reminders.insert({
    reminder: { id: reminderId, userId: req.userId, text: req.text, dueAt, timeZone, rrule: req.rrule ?? null, seriesStart: seriesStart ?? null, assumedTime: false, source, workflowId },
    at: now,
  });
  // Another request with this requestId inserted it first: this one is its retry, or another body.
  if (!created) return retried(deps, reminder, req, deadline);
  const start = await startWithin(deps, reminder, deadline);
  if (start.outcome === 'refused') {
    // Refused, or failed before it was sent: no workflow will ever run for this row.
    await deps.reminders.remove({ userId: reminder.userId, id: reminder.id });
    throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal did not take the reminder workflow: reminder not created', { workflowId }, { cause: start.error });
  }
  return { reminder, created: true, pending: start.outcome === 'unanswered' };
}

/**
 * A request under an existing reminder's requestId: the same body returns the reminder (and
 * starts its workflow if the attempt that inserted it died before: a row still `scheduled` that
 * never fired; a workflow that exists, running or closed, is left alone); another body is refused.
 */
async function retried(deps: ReminderDeps, existing: ReminderRecord, req: CreateReminderRequest, deadline: number): Promise<CreateReminderResult> {
  const field = differingField(existing, req);
  if (field) {
    throw new MemoryServiceError(ErrorCode.requestIdReused, `requestId "${req.requestId}" already created a reminder with another ${field}; send the new reminder under a new requestId`, {
      requestId: req.requestId,
      field,
      id: existing.id,
    });
  }
  if (existing.status !== 'scheduled' || existing.fireCount > 0) return { reminder: existing, created: false, pending: false };
  const start = await startWithin(deps, existing, deadline);
  if (start.outcome === 'refused') {
    throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal did not take the reminder workflow', { workflowId: existing.workflowId }, { cause: start.error });
  }
  return { reminder: existing, created: false, pending: start.outcome === 'unanswered' };
}

/** The gRPC status codes read here (grpc/status.proto). */
const Grpc = { invalidArgument: 3, notFound: 5, permissionDenied: 7, resourceExhausted: 8, failedPrecondition: 9, unimplemented: 12, unauthenticated: 16 } as const;

/**
 * Codes with which the server itself turned a call down: a start refused so has not happened
 * and never will. Every other failure (deadline, unavailable, cancelled, unknown, internal) may
 * come after the server took it.
 */
const REFUSALS: ReadonlySet<number> = new Set(Object.values(Grpc));

function grpcCodeOf(err: unknown): number | undefined {
  for (const e of causeChain(err)) {
    if (isGrpcServiceError(e)) return e.code;
  }
  return undefined;
}

/**
 * Whether Temporal answers at all before the deadline. Asked before anything is stored, so that
 * an unreachable Temporal gets a plain 503 with nothing sent that could still land.
 */
async function temporalAnswers(deps: ReminderDeps, deadline: number): Promise<boolean> {
  try {
    await deps.temporal.connection.withDeadline(deadline, () => deps.temporal.connection.workflowService.getSystemInfo({}));
    return true;
  } catch (err) {
    // A server too old for the call still answered.
    return grpcCodeOf(err) === Grpc.unimplemented;
  }
}

/**
 * Starts the row's workflow before the deadline: `started` (or it existed), `refused` (Temporal
 * turned the start down, or it failed before it was sent), or `unanswered` (sent, no answer: it
 * may land later).
 */
async function startWithin(
  deps: ReminderDeps,
  reminder: ReminderRecord,
  deadline: number,
): Promise<{ outcome: 'started' } | { outcome: 'unanswered' } | { outcome: 'refused'; error: unknown }> {
  try {
    await startReminderWorkflow(deps, reminder, deadline);
    return { outcome: 'started' };
  } catch (err) {
    const code = grpcCodeOf(err);
    return code === undefined || REFUSALS.has(code) ? { outcome: 'refused', error: err } : { outcome: 'unanswered' };
  }
}

/**
 * Starts the row's ReminderWorkflow under its own id, once ever: an id that exists, running or
 * closed (within retention), is rejected as a duplicate and answered `existed` — never a second
 * run that would fire again. A due time already past fires as soon as the workflow runs.
 * Bounded by `deadline` (TEMPORAL_CALL_TIMEOUT_MS from now unless given); other failures
 * (Temporal unreachable, no answer in time) are thrown as they are.
 */
export async function startReminderWorkflow(
  deps: Pick<ReminderDeps, 'temporal' | 'taskQueue' | 'config'>,
  reminder: ReminderRecord,
  deadline = Date.now() + deps.config.reliability.temporalCallMs,
): Promise<'started' | 'existed'> {
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
    await deps.temporal.connection.withDeadline(deadline, () =>
      deps.temporal.workflow.start<ReminderWorkflow>(ProactiveWorkflows.reminder, {
        taskQueue: deps.taskQueue,
        workflowId: reminder.workflowId,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: [
          ...userSearchAttributes(reminder.userId),
          { key: ReminderStatusKey, value: 'scheduled' },
        ],
        staticSummary: `Reminder due ${input.dueAt} (${input.timeZone})${input.rrule ? `, repeats ${input.rrule}` : ''}`,
      }),
    );
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
 * Hands an answer (a signal, a cancel request) to the reminder's workflow before the deadline.
 *
 * A reminder created while Temporal did not answer (`pending`) may have no workflow yet: its start
 * never landed and the reconciler has not reached the row. Refusing the user's snooze or cancel
 * then (409, "no longer open") would be wrong, because the reminder is open. So a row whose
 * workflow was never seen to start gets it started here, under the row's one id, and the answer
 * follows. Errors are the send's or the start's, as they come. The id is the row's, and the start rejects an id that exists, so a start that lands late
 * or the reconciler's start is the same single run; only a workflow that existed and closed stays 409.
 */
async function toWorkflow<T>(deps: ReminderDeps, reminder: ReminderRecord, deadline: number, send: (handle: WorkflowHandle) => Promise<T>): Promise<T> {
  const handle = deps.temporal.workflow.getHandle(reminder.workflowId);
  try {
    return await deps.temporal.connection.withDeadline(deadline, () => send(handle));
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError) || !(await deps.reminders.neverStarted({ userId: reminder.userId, id: reminder.id }))) throw err;
  }
  if ((await startReminderWorkflow(deps, reminder, deadline)) === 'started') await deps.reminders.markWorkflowStarted({ userId: reminder.userId, id: reminder.id, at: new Date() });
  return deps.temporal.connection.withDeadline(deadline, () => send(handle));
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
    await toWorkflow(deps, reminder, deadline, (handle) => handle.signal(snoozeSignal, { seconds }));
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
    await toWorkflow(deps, reminder, deadline, (handle) => handle.signal(dismissSignal, {}));
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
    await toWorkflow(deps, reminder, deadline, (handle) => handle.cancel());
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
  let state: ReminderState | undefined;
  try {
    const update = await toWorkflow(deps, reminder, deadline, (handle) =>
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
