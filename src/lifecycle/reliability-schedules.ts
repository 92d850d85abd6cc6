import { ScheduleOverlapPolicy, type Client, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import { WorkflowType } from '../client/temporal-contract';
import { ensureSchedule, sameActionAndPolicies, type ScheduleOutcome } from './lifecycle-schedules';

/**
 * The reconcilers' Temporal Schedules (docs/reliability.md), created or updated at worker start
 * like the lifecycle schedules, and visible in Temporal UI. Ids carry the task queue, so two
 * deployments sharing a namespace keep their own.
 *
 * The reconcilers themselves live with the state they repair (workflows/conversation/reconcilers.ts,
 * workflows/proactive/reminder-reconciler.ts); only their schedules stay here, in lifecycle, because
 * a schedule names its workflow by the public contract's type name (`WorkflowType`,
 * src/client/temporal-contract.ts, no capability's code): lifecycle imports nothing of conversation
 * or proactive for it, so this is the smallest change that leaves no known violation, and the
 * schedule ids, their interval check and their one call at worker start stay as they were.
 */
export const extractionReconcilerScheduleId = (taskQueue: string): string => `reconcile:extractions:${taskQueue}`;
export const reminderReconcilerScheduleId = (taskQueue: string): string => `reconcile:reminders:${taskQueue}`;
export const outboxDrainScheduleId = (taskQueue: string): string => `drain:vector-outbox:${taskQueue}`;
export const exchangeIndexScheduleId = (taskQueue: string): string => `index:exchanges:${taskQueue}`;

/** Workflow type names from the one list of them (the public Temporal contract), not from the workflow bundle. */
type WorkflowName = WorkflowType;

interface DesiredInterval {
  scheduleId: string;
  workflowType: WorkflowName;
  everySeconds: number;
  note: string;
}

function optionsFor(d: DesiredInterval, taskQueue: string): ScheduleOptions {
  return {
    scheduleId: d.scheduleId,
    spec: { intervals: [{ every: d.everySeconds * 1000 }] },
    action: { type: 'startWorkflow', workflowType: d.workflowType, taskQueue, workflowId: d.scheduleId, args: [{}], staticSummary: d.note },
    // A tick that is still running when the next is due is enough: the next one is skipped. After
    // an outage one catch-up tick runs, not a backlog of them.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: d.everySeconds * 1000 },
    state: { note: d.note },
  };
}

/** Whether an existing interval schedule already has the interval, action and policies we want. */
export function intervalScheduleMatches(existing: ScheduleDescription, desired: ScheduleOptions): boolean {
  const have = existing.spec.intervals;
  const want = desired.spec.intervals?.[0];
  return (
    have?.length === 1 &&
    want !== undefined &&
    have[0]!.every === Number(want.every) &&
    (existing.spec.calendars?.length ?? 0) === 0 &&
    sameActionAndPolicies(existing, desired)
  );
}

/**
 * Creates the extraction and reminder reconciler, vector outbox drain and exchange indexer schedules, or updates them when their
 * interval, workflow or task queue changed; otherwise leaves them alone. Safe at every worker start.
 */
export async function ensureReliabilitySchedules(
  client: Client,
  opts: { taskQueue: string; reconcileSeconds: number; drainSeconds: number; reminderReconcileSeconds: number; exchangeIndexSeconds?: number },
): Promise<Record<string, ScheduleOutcome>> {
  const desired: DesiredInterval[] = [
    {
      scheduleId: extractionReconcilerScheduleId(opts.taskQueue),
      workflowType: WorkflowType.extractionReconciler,
      everySeconds: opts.reconcileSeconds,
      note: 'Extraction reconciler: idle conversations with messages after their watermark',
    },
    {
      scheduleId: reminderReconcilerScheduleId(opts.taskQueue),
      workflowType: WorkflowType.reminderReconciler,
      everySeconds: opts.reminderReconcileSeconds,
      note: 'Reminder reconciler: open reminders whose workflow never started',
    },
    { scheduleId: outboxDrainScheduleId(opts.taskQueue), workflowType: WorkflowType.vectorOutbox, everySeconds: opts.drainSeconds, note: 'Vector outbox drain: backoff and dead letters' },
    ...(opts.exchangeIndexSeconds === undefined
      ? []
      : [
          {
            scheduleId: exchangeIndexScheduleId(opts.taskQueue),
            workflowType: WorkflowType.exchangeIndex,
            everySeconds: opts.exchangeIndexSeconds,
            note: 'Exchange indexer: new messages embedded as exchanges for dense conversation search',
          },
        ]),
  ];
  const outcomes: Record<string, ScheduleOutcome> = {};
  for (const d of desired) outcomes[d.scheduleId] = await ensureSchedule(client, optionsFor(d, opts.taskQueue), intervalScheduleMatches);
  return outcomes;
}
