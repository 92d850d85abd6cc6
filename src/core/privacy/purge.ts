/**
 * Pure parts of a user purge (shared by the PurgeUser workflow, its activities and the API): what
 * the audit counts, and the ids a purge runs under. Nothing here may carry a user's key or text.
 */
import type { PurgeCounts } from '../ports/privacy';

// The purge's port records these counts, so their shape lives with the port.
export type { PurgeCounts };

export function emptyPurgeCounts(): PurgeCounts {
  return { postgres: {}, chroma: {}, schedulesDeleted: 0, workflowsTerminated: 0, workflowsDeleted: 0, dataKeyDestroyed: false };
}

const sumRecords = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

export function addPurgeCounts(a: PurgeCounts, b: Partial<PurgeCounts>): PurgeCounts {
  return {
    postgres: sumRecords(a.postgres, b.postgres ?? {}),
    chroma: sumRecords(a.chroma, b.chroma ?? {}),
    schedulesDeleted: a.schedulesDeleted + (b.schedulesDeleted ?? 0),
    workflowsTerminated: a.workflowsTerminated + (b.workflowsTerminated ?? 0),
    workflowsDeleted: a.workflowsDeleted + (b.workflowsDeleted ?? 0),
    dataKeyDestroyed: a.dataKeyDestroyed || (b.dataKeyDestroyed ?? false),
  };
}

/** The workflow type of a purge (Temporal UI, visibility queries). */
export const PURGE_WORKFLOW_TYPE = 'PurgeUser';

/**
 * Workflow id of a user's purge: tenant and the keyed user ref, never the user key, so the id
 * that outlives the purge (Temporal keeps closed workflows for its retention) names nobody.
 * One id per user: a second DELETE while one runs joins it; after it finished, starts anew.
 */
export function purgeWorkflowId(tenantId: string, userRef: string): string {
  return `purge:${tenantId}:${userRef}`;
}

/**
 * User keys are ids (tenant, ":", base32; in tests the path's user id), never free text: this is
 * what makes them safe to quote in a visibility query (`MemoryUserId = '<key>'`).
 */
export const USER_KEY_PATTERN = /^[A-Z0-9][\w.:@-]{0,199}$/i;
