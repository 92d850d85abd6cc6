import { ActivityFailure, continueAsNew, log, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createLifecycleActivities, LifecycleBatchInput } from '../../activities/lifecycle/lifecycle';
import {
  addSweepCounts,
  appendCapped,
  emptySweepCounts,
  MAX_LISTED_TRANSITIONS,
  type LifecycleStepResult,
  type LifecycleTransition,
  type SweepCounts,
} from '../../src/core/lifecycle/sweep';
import { addRetentionCounts, emptyRetentionCounts, type RetentionCounts } from '../../src/core/lifecycle/retention';

type Activities = ReturnType<typeof createLifecycleActivities>;

// Each step commits page by page and heartbeats per page; a lost worker is noticed within a
// minute and the retry resumes from the last heartbeat.
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 };
const steps = proxyActivities<Activities>({ startToCloseTimeout: '5m', heartbeatTimeout: '1m', retry });
// Chroma being down must not fail the sweep: statuses are committed, the outbox keeps the deletions.
const vectorSteps = proxyActivities<Activities>({ startToCloseTimeout: '5m', heartbeatTimeout: '1m', retry: { ...retry, maximumAttempts: 5 } });
// Retention deletes episode vectors before their rows: with Chroma down it stops, the sweep does not fail.
const retentionSteps = proxyActivities<Activities>({ startToCloseTimeout: '5m', heartbeatTimeout: '1m', retry: { ...retry, maximumAttempts: 5 } });

/** The sweep's phases, in order. */
export const SWEEP_PHASES = ['decay', 'expireArchived', 'capacity', 'vectors', 'retention'] as const;
export type SweepPhase = (typeof SWEEP_PHASES)[number];
/** Sweeps started before retention existed (their histories) run without the retention phase. */
const RETENTION_PATCH = 'sweep-retention';

/** State carried across continue-as-new. */
export interface SweepProgress {
  phase: SweepPhase;
  cursor: string | null;
  counts: SweepCounts;
  transitions: LifecycleTransition[];
  truncated: boolean;
  /** Runs of this sweep so far (1 + continue-as-new count). */
  runs: number;
  /** Rows deleted by the retention phase so far. */
  retention?: RetentionCounts;
}

export interface MemorySweepInput {
  /** The sweep's instant (ISO). Default: the workflow's start time. Tests pass days ahead. */
  now?: string;
  /** Memories per page; default SWEEP_BATCH_SIZE. */
  batchSize?: number;
  /** Active memories kept per user; default MAX_ACTIVE_MEMORIES_PER_USER. */
  capacity?: number;
  /** Activities per run before continue-as-new (default 100; the history stays far below its limits). */
  maxStepsPerRun?: number;
  /** Time each activity may spend on pages before returning its cursor (default 20 s; 1 = one page per activity). */
  stepBudgetMs?: number;
  progress?: SweepProgress;
}

export interface MemorySweepResult {
  now: string;
  counts: SweepCounts;
  /** Up to 1000 archive/expire transitions; all of them are in memory_events with this workflow id. */
  transitions: LifecycleTransition[];
  transitionsTruncated: boolean;
  runs: number;
  /** True when Chroma refused deletions: they stay in the vector outbox for the next sync. */
  vectorsPending: boolean;
  /** Rows deleted for being older than RETENTION_*_DAYS (absent for sweeps from before retention). */
  retention?: RetentionCounts;
  /** True when the retention phase gave up after its retries (e.g. Chroma down): tomorrow's sweep resumes it. */
  retentionPending?: boolean;
}

const DEFAULT_STEPS_PER_RUN = 100;

async function runStep(phase: SweepPhase, args: LifecycleBatchInput, capacity?: number): Promise<LifecycleStepResult> {
  switch (phase) {
    case 'decay':
      return steps.sweepBatch(args);
    case 'expireArchived':
      return steps.expireArchivedBatch(args);
    case 'capacity':
      // Its pages are users, not memories: the step's own page size applies.
      return steps.enforceCapacityBatch({ now: args.now, cursor: args.cursor, budgetMs: args.budgetMs, cap: capacity });
    case 'vectors':
      return vectorSteps.drainVectorDeletes(args);
    case 'retention':
      throw new Error('the retention phase has its own step');
  }
}

/**
 * The daily forgetting sweep over every user's memories (set-based, paged, idempotent):
 *   1. decay — refresh decay scores, expire what outlived `expires_at`, archive decay < 0.2;
 *   2. expireArchived — archived memories whose lifetime ended become expired;
 *   3. capacity — users above the cap keep their top-N by importance, the rest is archived;
 *   4. vectors — Chroma loses the vectors of everything that left the active set;
 *   5. retention — messages, episodes (and their vectors), notifications and digests older than
 *      RETENTION_*_DAYS are deleted, so raw conversations are not kept for ever.
 * One instant `now` for the whole sweep, carried across continue-as-new. Every change is a
 * memory_events row with this workflow's id; the result has exact counts and a sample.
 */
export async function memorySweepWorkflow(input: MemorySweepInput = {}): Promise<MemorySweepResult> {
  const now = input.now ?? new Date().toISOString();
  const p: SweepProgress = input.progress
    ? { ...input.progress, runs: input.progress.runs + 1 }
    : { phase: 'decay', cursor: null, counts: emptySweepCounts(), transitions: [], truncated: false, runs: 1 };
  const phases: readonly SweepPhase[] = patched(RETENTION_PATCH) ? SWEEP_PHASES : SWEEP_PHASES.filter((phase) => phase !== 'retention');
  if (phases.includes('retention')) p.retention ??= emptyRetentionCounts();
  let vectorsPending = false;
  let retentionPending = false;
  let stepsThisRun = 0;

  for (let phaseIndex = phases.indexOf(p.phase); phaseIndex < phases.length; ) {
    let result: LifecycleStepResult;
    const args = { now, cursor: p.cursor, limit: input.batchSize, budgetMs: input.stepBudgetMs };
    try {
      if (p.phase === 'retention') {
        const r = await retentionSteps.retentionBatch(args);
        p.retention = addRetentionCounts(p.retention ?? emptyRetentionCounts(), r.counts);
        result = { cursor: r.cursor, done: r.done, counts: emptySweepCounts(), transitions: [], truncated: false };
      } else {
        result = await runStep(p.phase, args, input.capacity);
      }
    } catch (err) {
      if ((p.phase !== 'vectors' && p.phase !== 'retention') || !(err instanceof ActivityFailure)) throw err;
      if (p.phase === 'vectors') {
        log.warn('vector deletions left in the outbox', { error: err.message });
        vectorsPending = true;
      } else {
        // What retention committed stays deleted; the rest is due again tomorrow.
        log.warn('retention incomplete', { error: err.message });
        retentionPending = true;
      }
      result = { cursor: null, done: true, counts: emptySweepCounts(), transitions: [], truncated: false };
    }
    p.counts = addSweepCounts(p.counts, result.counts);
    const sample = appendCapped(p.transitions, result.transitions, MAX_LISTED_TRANSITIONS);
    p.transitions = sample.list;
    p.truncated ||= sample.truncated || result.truncated;
    if (result.done) {
      phaseIndex++;
      p.phase = phases[phaseIndex] ?? 'vectors';
      p.cursor = null;
      if (phaseIndex >= phases.length) break;
    } else {
      p.cursor = result.cursor;
    }
    stepsThisRun++;
    if (stepsThisRun >= (input.maxStepsPerRun ?? DEFAULT_STEPS_PER_RUN) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof memorySweepWorkflow>({ ...input, now, progress: p });
    }
  }
  log.info('memory sweep finished', { now, counts: p.counts, runs: p.runs });
  return {
    now,
    counts: p.counts,
    transitions: p.transitions,
    transitionsTruncated: p.truncated,
    runs: p.runs,
    vectorsPending,
    ...(p.retention ? { retention: p.retention, retentionPending } : {}),
  };
}
