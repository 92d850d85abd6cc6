/**
 * Reminders through the API: validation in the user's timezone, the row, and the workflow. The
 * row is written before the workflow starts so a list right after creation shows it; the
 * workflow is the single writer from then on (fired, snoozed, dismissed, cancelled).
 */
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { DateTime, IANAZone } from 'luxon';
import type pg from 'pg';
import { reminderStore, type ReminderRecord } from '../adapters/postgres/reminder-repository';
import { settingsStore } from '../adapters/postgres/settings-repository';
import type { AppConfig } from '../config';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { uuidFromKey } from '../adapters/ids';
import { isClosed, type ReminderState } from '../core/proactive/reminder-state';
import { nextOccurrence, validateRrule } from '../core/time/recurrence';
import { dismissSignal, reminderWorkflow, reminderWorkflowId, rescheduleUpdate, snoozeSignal } from '../../workflows';
import type { ReminderWorkflowInput } from '../../workflows/proactive-types';
import { ReminderStatusKey, userSearchAttributes } from '../../workflows/search-attributes';

export interface ReminderDeps {
  pool: pg.Pool;
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
  pool: pg.Pool,
  req: CreateReminderRequest,
  now: Date,
): Promise<{ timeZone: string; dueAt: Date; seriesStart?: Date }> {
  const timeZone = req.timezone ?? (await settingsStore.get(pool, req.userId))?.timezone ?? 'UTC';
  if (!IANAZone.isValidZone(timeZone)) throw invalid(`unknown IANA timezone "${timeZone}"`, 'timezone');
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
  const { timeZone, dueAt, seriesStart } = await resolveDue(deps.pool, req, now);
  const reminderId = req.requestId ? uuidFromKey(`reminder:api:${req.userId}:${req.requestId}`) : randomUUID();
  const workflowId = reminderWorkflowId(req.userId, reminderId);
  const source = { via: 'api' as const, ...(req.requestId ? { requestId: req.requestId } : {}) };
  const { reminder, created } = await reminderStore.insert(
    deps.pool,
    { id: reminderId, userId: req.userId, text: req.text, dueAt, timeZone, rrule: req.rrule ?? null, seriesStart: seriesStart ?? null, assumedTime: false, source, workflowId },
    now,
  );
  if (!created) return { reminder, created };
  const input: ReminderWorkflowInput = {
    userId: req.userId,
    reminderId,
    text: req.text,
    dueAt: dueAt.toISOString(),
    timeZone,
    ...(req.rrule ? { rrule: req.rrule, seriesStart: seriesStart!.toISOString() } : {}),
    source,
    ackWindowSeconds: deps.config.proactive.reminderAckSeconds,
  };
  try {
    await deps.temporal.workflow.start(reminderWorkflow, {
      taskQueue: deps.taskQueue,
      workflowId,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        ...userSearchAttributes(req.userId),
        { key: ReminderStatusKey, value: 'scheduled' },
      ],
      staticSummary: `Reminder due ${input.dueAt} (${timeZone})${req.rrule ? `, repeats ${req.rrule}` : ''}`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      // Without its workflow the row would claim a reminder that never fires.
      await reminderStore.remove(deps.pool, req.userId, reminderId);
      throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable: reminder not created', { workflowId }, { cause: err });
    }
  }
  return { reminder, created };
}

async function openReminder(deps: ReminderDeps, userId: string, id: string): Promise<ReminderRecord> {
  const reminder = await reminderStore.get(deps.pool, userId, id);
  if (!reminder) throw new MemoryServiceError(ErrorCode.notFound, 'reminder not found', { id });
  if (isClosed(reminder)) throw new MemoryServiceError(ErrorCode.invalidState, `reminder is ${reminder.status}`, { id, status: reminder.status });
  return reminder;
}

function closedOrUnavailable(err: unknown, id: string): MemoryServiceError {
  if (err instanceof WorkflowNotFoundError) return new MemoryServiceError(ErrorCode.invalidState, 'reminder is no longer open', { id }, { cause: err });
  return new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable', { id }, { cause: err });
}

/** "稍后": signals the reminder's workflow to fire again in `seconds`. */
export async function snoozeReminder(deps: ReminderDeps, userId: string, id: string, seconds: number): Promise<ReminderRecord> {
  const reminder = await openReminder(deps, userId, id);
  try {
    await deps.temporal.workflow.getHandle(reminder.workflowId).signal(snoozeSignal, { seconds });
  } catch (err) {
    throw closedOrUnavailable(err, id);
  }
  return reminder;
}

/** "知道了": signals the reminder's workflow that this occurrence is done. */
export async function dismissReminder(deps: ReminderDeps, userId: string, id: string): Promise<ReminderRecord> {
  const reminder = await openReminder(deps, userId, id);
  try {
    await deps.temporal.workflow.getHandle(reminder.workflowId).signal(dismissSignal, {});
  } catch (err) {
    throw closedOrUnavailable(err, id);
  }
  return reminder;
}

/** Cancels the reminder (and, for a recurring one, the whole series). */
export async function cancelReminder(deps: ReminderDeps, userId: string, id: string): Promise<ReminderRecord> {
  const reminder = await openReminder(deps, userId, id);
  try {
    await deps.temporal.workflow.getHandle(reminder.workflowId).cancel();
  } catch (err) {
    throw closedOrUnavailable(err, id);
  }
  return reminder;
}

/** Moves the due time through the workflow's validated update; returns the workflow's new state. */
export async function rescheduleReminder(deps: ReminderDeps, userId: string, id: string, dueAt: string): Promise<ReminderState> {
  const reminder = await openReminder(deps, userId, id);
  const parsed = DateTime.fromISO(dueAt, { zone: reminder.timeZone });
  if (!parsed.isValid) throw invalid('dueAt is not an ISO 8601 time', 'dueAt');
  try {
    return await deps.temporal.workflow.getHandle(reminder.workflowId).executeUpdate(rescheduleUpdate, { args: [{ dueAt: parsed.toUTC().toISO()! }] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause instanceof Error ? err.cause.message : err.message;
      throw new MemoryServiceError(ErrorCode.validationFailed, `reschedule refused: ${cause}`, { id, field: 'dueAt' }, { cause: err });
    }
    throw closedOrUnavailable(err, id);
  }
}
