import { continueAsNew, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createLifecycleActivities } from '../../activities/lifecycle/lifecycle';
import {
  addSweepCounts,
  appendCapped,
  emptySweepCounts,
  MAX_LISTED_TRANSITIONS,
  type LifecycleTransition,
  type SweepCounts,
} from '../../src/core/lifecycle/sweep';

type Activities = ReturnType<typeof createLifecycleActivities>;

const { reinforceImportantBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
});

export interface WeeklyReinforcementInput {
  /** The run's instant (ISO). Default: the workflow's start time. */
  now?: string;
  batchSize?: number;
  maxStepsPerRun?: number;
  /** Time each activity may spend on pages (default 20 s). */
  stepBudgetMs?: number;
  /** State carried across continue-as-new. */
  progress?: { cursor: string | null; counts: SweepCounts; transitions: LifecycleTransition[]; truncated: boolean; runs: number };
}

export interface WeeklyReinforcementResult {
  now: string;
  /** `scanned`: memories considered; `updated`: memories reinforced. */
  counts: SweepCounts;
  /** Up to 1000 reinforced memories; all are in memory_events (action auto_reinforce). */
  transitions: LifecycleTransition[];
  transitionsTruncated: boolean;
  runs: number;
}

/**
 * Weekly reinforcement (Monday 04:00): high and critical memories get their last access
 * refreshed — decay back to 1 — and their importance recomputed, so what matters most is not
 * forgotten merely because it was not mentioned for a while. Paged, idempotent per `now`, audited.
 * A lifecycle workflow: its step is the lifecycle sweep's (activities/lifecycle/lifecycle.ts), with
 * the same paging and heartbeats; its Schedule is in src/lifecycle/lifecycle-schedules.ts.
 */
export async function weeklyReinforcementWorkflow(input: WeeklyReinforcementInput = {}): Promise<WeeklyReinforcementResult> {
  const now = input.now ?? new Date().toISOString();
  const p = input.progress
    ? { ...input.progress, runs: input.progress.runs + 1 }
    : { cursor: null as string | null, counts: emptySweepCounts(), transitions: [] as LifecycleTransition[], truncated: false, runs: 1 };
  for (let step = 1; ; step++) {
    const r = await reinforceImportantBatch({ now, cursor: p.cursor, limit: input.batchSize, budgetMs: input.stepBudgetMs });
    p.counts = addSweepCounts(p.counts, r.counts);
    const sample = appendCapped(p.transitions, r.transitions, MAX_LISTED_TRANSITIONS);
    p.transitions = sample.list;
    p.truncated ||= sample.truncated || r.truncated;
    p.cursor = r.cursor;
    if (r.done) break;
    if (step >= (input.maxStepsPerRun ?? 100) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof weeklyReinforcementWorkflow>({ ...input, now, progress: p });
    }
  }
  log.info('weekly reinforcement finished', { now, counts: p.counts });
  return { now, counts: p.counts, transitions: p.transitions, transitionsTruncated: p.truncated, runs: p.runs };
}
