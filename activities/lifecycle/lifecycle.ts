import { Context } from '@temporalio/activity';
import type { LifecycleAudit } from '../../src/core/ports/lifecycle';
import { addRetentionCounts, type RetentionStepResult } from '../../src/core/lifecycle/retention';
import { addSweepCounts, appendCapped, MAX_LISTED_TRANSITIONS } from '../../src/core/lifecycle/sweep';
import type { ServiceDeps } from '../../src/shared/deps';
import {
  drainVectorDeletes,
  enforceCapacity,
  expireArchived,
  reinforceImportant,
  sweepDecay,
  sweepRetention,
  type LifecycleStepInput,
  type LifecycleStepResult,
} from '../../src/lifecycle/lifecycle-sweep';
import { withTypedFailures } from '../shared/failures';

/** Input of every lifecycle step activity (JSON: times as ISO strings). */
export interface LifecycleBatchInput {
  /** The sweep's instant (ISO), fixed for the whole sweep. */
  now: string;
  /** Resume after this memory id (user id for the capacity step); null at the start. */
  cursor: string | null;
  /** Page size; defaults to SWEEP_BATCH_SIZE (100 users per page for the capacity step). */
  limit?: number;
  /** Stop starting pages after this long and return the cursor (default 20 s). */
  budgetMs?: number;
}

const DEFAULT_BUDGET_MS = 20_000;
const CAPACITY_USERS_PER_PAGE = 100;

function audit(): LifecycleAudit {
  const info = Context.current().info;
  return { workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId, actor: `workflow:${info.workflowType}` };
}

/**
 * Runs a step with heartbeats after every committed page. A retried attempt resumes from the last
 * heartbeat's cursor and counts (pages are idempotent, so resuming from an earlier cursor would be
 * correct too, only slower).
 */
async function withHeartbeats(
  input: LifecycleBatchInput,
  defaultLimit: number,
  step: (s: LifecycleStepInput) => Promise<LifecycleStepResult>,
): Promise<LifecycleStepResult> {
  const ctx = Context.current();
  const resumed = ctx.info.heartbeatDetails as LifecycleStepResult | undefined;
  const result = await step({
    now: new Date(input.now),
    cursor: resumed?.cursor ?? input.cursor,
    limit: input.limit ?? defaultLimit,
    budgetMs: input.budgetMs ?? DEFAULT_BUDGET_MS,
    audit: audit(),
    onPage: (progress) => ctx.heartbeat(progress),
  });
  if (!resumed) return result;
  // Pages committed by the failed attempt were reported in its last heartbeat only.
  const sample = appendCapped(resumed.transitions, result.transitions, MAX_LISTED_TRANSITIONS);
  return { ...result, counts: addSweepCounts(resumed.counts, result.counts), transitions: sample.list, truncated: resumed.truncated || result.truncated || sample.truncated };
}

/** Activities of the lifecycle workflows (daily sweep, weekly reinforcement). */
export function createLifecycleActivities(deps: ServiceDeps) {
  const batch = deps.config.lifecycle.sweepBatchSize;
  return withTypedFailures({
    /** One or more pages of the decay pass (refresh decay, expire, archive). */
    async sweepBatch(input: LifecycleBatchInput): Promise<LifecycleStepResult> {
      return withHeartbeats(input, batch, (s) => sweepDecay(deps, s));
    },

    /** Expires archived memories whose lifetime ended. */
    async expireArchivedBatch(input: LifecycleBatchInput): Promise<LifecycleStepResult> {
      return withHeartbeats(input, batch, (s) => expireArchived(deps, s));
    },

    /** Archives the overflow of users above the capacity cap (`cap` overrides MAX_ACTIVE_MEMORIES_PER_USER). */
    async enforceCapacityBatch(input: LifecycleBatchInput & { cap?: number }): Promise<LifecycleStepResult> {
      return withHeartbeats(input, CAPACITY_USERS_PER_PAGE, (s) => enforceCapacity(deps, { ...s, cap: input.cap ?? deps.config.lifecycle.maxActivePerUser }));
    },

    /** Deletes the vectors of memories that left the active set. */
    async drainVectorDeletes(input: LifecycleBatchInput): Promise<LifecycleStepResult> {
      return withHeartbeats(input, batch, (s) => drainVectorDeletes(deps, s));
    },

    /**
     * Retention: deletes messages, episodes, notifications and digests older than RETENTION_*_DAYS
     * (relative to the sweep's `now`). Heartbeats per page; a retry resumes from the last one.
     */
    async retentionBatch(input: LifecycleBatchInput): Promise<RetentionStepResult> {
      const ctx = Context.current();
      const resumed = ctx.info.heartbeatDetails as RetentionStepResult | undefined;
      if (resumed?.done) return resumed;
      const result = await sweepRetention(deps, {
        now: new Date(input.now),
        cursor: resumed?.cursor ?? input.cursor,
        limit: input.limit ?? batch,
        budgetMs: input.budgetMs ?? DEFAULT_BUDGET_MS,
        onPage: (progress) => ctx.heartbeat(resumed ? { ...progress, counts: addRetentionCounts(resumed.counts, progress.counts) } : progress),
      });
      return resumed ? { ...result, counts: addRetentionCounts(resumed.counts, result.counts) } : result;
    },

    /** Weekly: refreshes high/critical memories (decay reset, importance recomputed). */
    async reinforceImportantBatch(input: LifecycleBatchInput): Promise<LifecycleStepResult> {
      return withHeartbeats(input, batch, (s) => reinforceImportant(deps, s));
    },
  });
}
