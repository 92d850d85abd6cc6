import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type CalendarSpec,
  type Client,
  type DayOfWeek,
  type ScheduleDescription,
  type ScheduleOptions,
} from '@temporalio/client';
import { WorkflowType } from '../client/temporal-contract';

/**
 * The lifecycle's Temporal Schedules, created at worker start and visible in Temporal UI
 * (Schedules tab). Ids carry the task queue: two deployments sharing a namespace (staging and
 * production on different queues) each keep their own schedules instead of taking each other's.
 */
export const sweepScheduleId = (taskQueue: string): string => `sweep:daily:${taskQueue}`;
export const reinforcementScheduleId = (taskQueue: string): string => `reinforce:weekly:${taskQueue}`;

/** When the jobs run, in SCHEDULE_TIMEZONE (seed M.2.6: daily 03:00, weekly Monday 04:00). */
export const SWEEP_AT = { hour: 3, minute: 0 } as const;
export const REINFORCEMENT_AT = { hour: 4, minute: 0, dayOfWeek: 'MONDAY' as DayOfWeek } as const;

/**
 * A worker that was down at 03:00 still sweeps when it returns the same day; a longer outage
 * skips to the next day rather than running a backlog of identical sweeps.
 */
const CATCHUP_WINDOW_MS = 24 * 3600 * 1000;

/** Workflow type names from the one list of them (the public Temporal contract), not from the workflow bundle. */
type WorkflowName = WorkflowType;

interface DesiredSchedule {
  scheduleId: string;
  workflowType: WorkflowName;
  at: { hour: number; minute: number; dayOfWeek?: DayOfWeek };
  note: string;
}

export type ScheduleOutcome = 'created' | 'updated' | 'unchanged';

function optionsFor(d: DesiredSchedule, taskQueue: string, timezone: string): ScheduleOptions {
  const calendar: CalendarSpec = { hour: d.at.hour, minute: d.at.minute, ...(d.at.dayOfWeek ? { dayOfWeek: d.at.dayOfWeek } : {}), comment: d.note };
  return {
    scheduleId: d.scheduleId,
    spec: { calendars: [calendar], timezone },
    // Batch size and capacity come from the worker's configuration at run time, so the schedule
    // carries no settings that could go stale.
    action: { type: 'startWorkflow', workflowType: d.workflowType, taskQueue, workflowId: d.scheduleId, args: [{}], staticSummary: d.note },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: CATCHUP_WINDOW_MS },
    state: { note: d.note },
  };
}

/** Whether an existing schedule already has the spec, action and policies we want. */
export function scheduleMatches(existing: ScheduleDescription, desired: ScheduleOptions): boolean {
  const want = desired.spec.calendars?.[0];
  const have = existing.spec.calendars;
  const first = <T>(ranges: { start: T }[] | undefined): T | undefined => (ranges?.length === 1 ? ranges[0]!.start : undefined);
  const dayOfWeek = have?.[0]?.dayOfWeek;
  const everyDay = dayOfWeek !== undefined && dayOfWeek.length === 1 && dayOfWeek[0]!.start === 'SUNDAY' && dayOfWeek[0]!.end === 'SATURDAY';
  return (
    have?.length === 1 &&
    first(have[0]!.hour) === want?.hour &&
    first(have[0]!.minute) === want?.minute &&
    (want?.dayOfWeek === undefined ? dayOfWeek === undefined || dayOfWeek.length === 0 || everyDay : first(dayOfWeek) === want.dayOfWeek) &&
    (existing.spec.timezone ?? 'UTC') === (desired.spec.timezone ?? 'UTC') &&
    sameActionAndPolicies(existing, desired)
  );
}

/** What every service-wide schedule must keep, whatever its spec: workflow, queue, id, args, policies. */
export function sameActionAndPolicies(existing: ScheduleDescription, desired: ScheduleOptions): boolean {
  return (
    existing.action.workflowType === desired.action.workflowType &&
    existing.action.taskQueue === desired.action.taskQueue &&
    existing.action.workflowId === desired.action.workflowId &&
    JSON.stringify(existing.action.args ?? []) === JSON.stringify(desired.action.args ?? []) &&
    existing.policies.overlap === desired.policies?.overlap &&
    existing.policies.catchupWindow === desired.policies?.catchupWindow
  );
}

/**
 * Creates the schedule, or brings an existing one in line when `matches` says it differs; leaves
 * a matching one alone, so it is safe at every worker start.
 */
export async function ensureSchedule(
  client: Client,
  options: ScheduleOptions,
  matches: (existing: ScheduleDescription, desired: ScheduleOptions) => boolean,
): Promise<ScheduleOutcome> {
  try {
    await client.schedule.create(options);
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(options.scheduleId);
  if (matches(await handle.describe(), options)) return 'unchanged';
  await handle.update((previous) => ({ ...previous, spec: options.spec, action: options.action, policies: { ...previous.policies, ...options.policies } }));
  return 'updated';
}

/**
 * Creates the daily sweep and weekly reinforcement schedules, or updates them when their time,
 * timezone, workflow or task queue changed; otherwise leaves them alone. Safe to call at every
 * worker start, from any number of workers.
 */
export async function ensureLifecycleSchedules(client: Client, opts: { taskQueue: string; timezone: string }): Promise<Record<string, ScheduleOutcome>> {
  const desired: DesiredSchedule[] = [
    { scheduleId: sweepScheduleId(opts.taskQueue), workflowType: WorkflowType.memorySweep, at: SWEEP_AT, note: 'Daily forgetting sweep: decay, archive, expire, capacity' },
    { scheduleId: reinforcementScheduleId(opts.taskQueue), workflowType: WorkflowType.weeklyReinforcement, at: REINFORCEMENT_AT, note: 'Weekly reinforcement of high-importance memories' },
  ];
  const outcomes: Record<string, ScheduleOutcome> = {};
  for (const d of desired) outcomes[d.scheduleId] = await ensureSchedule(client, optionsFor(d, opts.taskQueue, opts.timezone), scheduleMatches);
  return outcomes;
}
