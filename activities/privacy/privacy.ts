import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { PurgeCounts } from '../../src/core/privacy/purge';
import type { ServiceDeps } from '../../src/shared/deps';
import { beginPurgeAudit, completePurgeAudit, deleteUserSchedules, deleteUserWorkflows, destroyUserDataKey, dropUserVectors, purgeUserRows } from '../../src/privacy/user-purge';
import { withTypedFailures } from '../shared/failures';

/** The Temporal client the purge removes the user's schedules and executions with. */
export interface PurgeTemporal {
  client: Client;
  namespace: string;
}

function execution(): { workflowId: string; runId: string } {
  const e = Context.current().info.workflowExecution;
  if (!e) throw ApplicationFailure.create({ message: 'purge activities run inside the PurgeUser workflow', nonRetryable: true });
  return { workflowId: e.workflowId, runId: e.runId };
}

/**
 * Activities of the PurgeUser workflow. Every one is idempotent (it deletes what is still there
 * and counts it), so the workflow retries them without limit. Results carry counts only: activity
 * results are visible in Temporal UI and must not name the user.
 */
export function createPrivacyActivities(deps: ServiceDeps, temporal: PurgeTemporal) {
  return withTypedFailures({
    async beginPurgeAudit(input: { tenantId: string; userRef: string; requestedAt: string }): Promise<void> {
      await beginPurgeAudit(deps, { ...input, ...execution(), requestedAt: new Date(input.requestedAt) });
    },

    async deleteUserSchedules(input: { userKey: string }): Promise<Pick<PurgeCounts, 'schedulesDeleted'>> {
      return { schedulesDeleted: await deleteUserSchedules(temporal.client, input.userKey) };
    },

    /** Terminates and deletes the user's other workflow executions (not the purge itself). */
    async deleteUserWorkflows(input: { userKey: string }): Promise<Pick<PurgeCounts, 'workflowsTerminated' | 'workflowsDeleted'>> {
      const ctx = Context.current();
      const done = await deleteUserWorkflows(temporal.client, {
        namespace: temporal.namespace,
        userKey: input.userKey,
        skipWorkflowId: execution().workflowId,
        onProgress: (d) => ctx.heartbeat(d),
      });
      return { workflowsTerminated: done.terminated, workflowsDeleted: done.deleted };
    },

    /** Deletes the user's PostgreSQL rows: paged (`final: false`) or all at once under the user's lock (`final: true`). */
    async purgeUserRows(input: { userKey: string; final: boolean }): Promise<Pick<PurgeCounts, 'postgres'>> {
      const ctx = Context.current();
      // A retried attempt reports what the failed one deleted, too.
      const before = (ctx.info.heartbeatDetails as Record<string, number> | undefined) ?? {};
      const counts = await purgeUserRows(deps, input.userKey, { final: input.final, onProgress: (c) => ctx.heartbeat(merge(before, c)) });
      return { postgres: merge(before, counts) };
    },

    async dropUserVectors(input: { userKey: string }): Promise<Pick<PurgeCounts, 'chroma'>> {
      return { chroma: await dropUserVectors(deps, input.userKey) };
    },

    /** Crypto-shreds the user's payload key through the codec's hook, when one is configured. */
    async destroyUserDataKey(input: { userKey: string }): Promise<Pick<PurgeCounts, 'dataKeyDestroyed'>> {
      return { dataKeyDestroyed: await destroyUserDataKey(deps, input.userKey) };
    },

    async completePurgeAudit(input: { completedAt: string; counts: PurgeCounts }): Promise<void> {
      await completePurgeAudit(deps, { runId: execution().runId, completedAt: new Date(input.completedAt), counts: input.counts });
    },
  });
}

function merge(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}
