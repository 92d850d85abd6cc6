/**
 * Per-user Temporal Schedules of proactive memory: `digest:{userId}` runs DigestWorkflow daily at
 * the user's digest time in the user's timezone (the server keeps 22:00 local across DST), and
 * `nudge:{userId}` runs NudgeWorkflow every few minutes, paused while the user has opted out.
 * Global schedules (the lifecycle sweep) live elsewhere; these ids never collide with them.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleOptionsStartWorkflowAction, type ScheduleSpec } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { digestCalendarSpec } from '../core/proactive/digest-schedule';
import type { UserSettings } from '../core/proactive/settings';
import { ProactiveWorkflows } from './contract';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';
import type { ServiceDeps } from '../shared/deps';
import { userSettings } from '../account/settings';
import { withTemporalDeadline } from '../shared/workflow-wait';

export function digestScheduleId(userId: string): string {
  return `digest:${userId}`;
}

export function nudgeScheduleId(userId: string): string {
  return `nudge:${userId}`;
}

interface Desired<W extends Workflow> {
  scheduleId: string;
  spec: ScheduleSpec;
  action: ScheduleOptionsStartWorkflowAction<W>;
  paused: boolean;
  note: string;
}

/**
 * Creates the schedule, or replaces spec, action and paused state of the existing one. A purge
 * may delete the schedule between the create that found it and the update: then it is created
 * again (the settings row that asked for it was written after the purge, so it stands), instead
 * of the caller getting a 5xx for a race it did not cause.
 */
async function upsertSchedule<W extends Workflow>(temporal: Client, userId: string, d: Desired<W>): Promise<void> {
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' };
  for (let attempt = 1; ; attempt++) {
    try {
      await temporal.schedule.create({
        scheduleId: d.scheduleId,
        spec: d.spec,
        action: d.action,
        policies,
        typedSearchAttributes: userSearchAttributes(userId),
        state: { paused: d.paused, note: d.note },
      });
      return;
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    }
    try {
      await temporal.schedule.getHandle(d.scheduleId).update<W>((previous) => ({
        ...previous,
        spec: d.spec,
        action: d.action,
        policies,
        state: { paused: d.paused, note: d.note },
      }));
      return;
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError) || attempt >= MAX_UPSERT_ATTEMPTS) throw err;
    }
  }
}

/** Create-or-update rounds before a schedule that keeps vanishing under concurrent purges is an error. */
const MAX_UPSERT_ATTEMPTS = 3;

/**
 * Makes the user's digest and nudge schedules match their settings. Called when settings change
 * and when a user first creates a reminder; safe to call any number of times.
 */
export async function ensureProactiveSchedules(
  temporal: Client,
  opts: { taskQueue: string; userId: string; settings: UserSettings; nudgeIntervalMinutes: number },
): Promise<void> {
  const { userId, settings, taskQueue } = opts;
  const calendar = digestCalendarSpec(settings.digestTime, settings.timezone);
  await upsertSchedule(temporal, userId, {
    scheduleId: digestScheduleId(userId),
    spec: { calendars: calendar.calendars, timezone: calendar.timezone },
    action: {
      type: 'startWorkflow',
      workflowType: ProactiveWorkflows.digest,
      args: [{ userId, notify: true }],
      taskQueue,
      workflowId: `digest:${userId}`,
      typedSearchAttributes: userSearchAttributes(userId),
      staticSummary: `Daily digest for ${userId} at ${settings.digestTime} ${settings.timezone}`,
    },
    paused: false,
    note: `daily digest at ${settings.digestTime} ${settings.timezone}`,
  });
  await upsertSchedule(temporal, userId, {
    scheduleId: nudgeScheduleId(userId),
    spec: { intervals: [{ every: `${opts.nudgeIntervalMinutes}m` }] },
    action: {
      type: 'startWorkflow',
      workflowType: ProactiveWorkflows.nudge,
      args: [{ userId }],
      taskQueue,
      workflowId: `nudge:${userId}`,
      typedSearchAttributes: userSearchAttributes(userId),
      staticSummary: `Proactive nudge check for ${userId}`,
    },
    // Opt-out pauses the checks altogether; the workflow and the delivery check it again.
    paused: !settings.proactive.enabled,
    note: settings.proactive.enabled ? `nudges every ${opts.nudgeIntervalMinutes} min` : 'paused: user opted out of proactive nudges',
  });
}

/**
 * Reads the user's settings and brings both schedules in line with them, every Temporal call
 * under one deadline (TEMPORAL_CALL_TIMEOUT_MS): a hung Temporal fails this, not the request
 * waiting on it. A create or update sent before the deadline may still land; it carries these
 * settings, and the next sync writes the same again.
 */
export async function syncProactiveSchedules(
  deps: Pick<ServiceDeps, 'settings' | 'config'> & { temporal: Client; taskQueue: string },
  userId: string,
): Promise<void> {
  const settings = await userSettings(deps, userId);
  await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () =>
    ensureProactiveSchedules(deps.temporal, { taskQueue: deps.taskQueue, userId, settings, nudgeIntervalMinutes: deps.config.proactive.nudgeIntervalMinutes }),
  );
}
