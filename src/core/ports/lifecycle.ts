/** Ports of decay, reinforcement and the lifecycle sweeps (src/core/ports.ts re-exports every port). */
import type { MessageRef } from '../exchange-lines';
import type { ImportanceLevel } from '../types';
import type { ImportancePatch } from './memory';

/** What the sweep does to one memory. */
export const SweepAction = {
  /** Decay fell below the archive threshold, or the user is over capacity. Restorable. */
  archive: 'archive',
  /** `expires_at` has passed. Not restorable. */
  expire: 'expire',
} as const;
export type SweepAction = (typeof SweepAction)[keyof typeof SweepAction];

/** One status change made by a lifecycle job, as shown in its workflow result. */
export interface LifecycleTransition {
  memoryId: string;
  userId: string;
  action: SweepAction | 'reinforce';
  reason: string;
}

/** Who a lifecycle change is attributed to in the audit trail. */
export interface LifecycleAudit {
  workflowId?: string;
  runId?: string;
  actor: string;
}

/** Result of one page of the decay pass. */
export interface DecayPageResult {
  /** Active memories in the page (locked or not). */
  scanned: number;
  /** Highest id in the page: the next page starts after it. Null when the page was empty. */
  lastId: string | null;
  /** Rows written: decay score changed and/or status changed. */
  updated: number;
  transitions: LifecycleTransition[];
}

/** A high-importance memory fetched (and locked) for the weekly reinforcement. */
export interface ReinforcementRow {
  id: string;
  userId: string;
  text: string;
  frequencyCount: number;
  associatedTopics: string[];
  importance: number;
  importanceLevel: ImportanceLevel;
  lastAccessedAt: Date;
  decayScore: number;
}

/** New importance of one memory, computed by the caller. */
export interface ReinforcementUpdate extends ImportancePatch {
  id: string;
}

/** A pending vector deletion of the lifecycle drain. */
export interface VectorDeletion {
  memoryId: string;
  userId: string;
}

/**
 * The lifecycle jobs' set-based pages, across all users by design (the daily sweep, the weekly
 * reinforcement, the vector-delete drain). Each page keeps postings, index statistics, vector
 * outbox and audit in step with the status changes, and skips rows a writer holds. Only reachable
 * inside a {@link UnitOfWork}: the locks a page takes last until it ends. Cursors are null at the start.
 */
export interface LifecycleRepository {
  /** One page of the decay pass after `afterId`: refresh decay, expire the due, archive the faded. */
  sweepDecayPage(input: { now: Date; afterId: string | null; limit: number; audit: LifecycleAudit; decayTolerance?: number }): Promise<DecayPageResult>;
  /** Expires up to `limit` archived memories whose lifetime has ended. */
  expireArchivedPage(input: { now: Date; limit: number; audit: LifecycleAudit }): Promise<LifecycleTransition[]>;
  /** Users after `afterUserId` holding more than `cap` active memories, in user id order. */
  usersOverCapacity(input: { cap: number; afterUserId: string | null; limit: number }): Promise<string[]>;
  /** Archives, per user, the active memories beyond the top `cap` by importance (never instructions). */
  archiveOverCapacity(input: { userIds: string[]; cap: number; now: Date; audit: LifecycleAudit }): Promise<LifecycleTransition[]>;
  /** High/critical active memories after `afterId` not accessed since `now`, locked. */
  lockReinforcementPage(input: { now: Date; afterId: string | null; limit: number }): Promise<ReinforcementRow[]>;
  /** Stores the recomputed importance and resets decay of the given memories, one audit event each. */
  applyReinforcement(input: { now: Date; updates: ReinforcementUpdate[]; audit: LifecycleAudit; reason: string }): Promise<LifecycleTransition[]>;
  /** Pending vector deletions after `afterId`, locked until the unit of work ends. */
  lockVectorDeletes(input: { afterId: string | null; limit: number }): Promise<VectorDeletion[]>;
  /** Clears deletions locked with {@link lockVectorDeletes} once the vector index confirmed them. */
  clearVectorDeletes(input: { entries: VectorDeletion[] }): Promise<number>;
  /** Records a failed deletion attempt (the entries stay for the next drain). */
  failVectorDeletes(input: { entries: VectorDeletion[]; error: string }): Promise<void>;
}

/**
 * What the retention sweep asks of the conversation capability, which sits above lifecycle: the
 * vectors derived from the messages a page deletes (the exchange index's lines and pairs) go inside
 * that page's transaction. Implemented by src/conversation/exchange-index.ts, wired in src/runtime.ts.
 */
export interface MessageVectorEraser {
  /** Removes the vectors of one user's messages; resolves to the number of vector ids removed (0 without an exchange index). */
  eraseMessageVectors(input: { userId: string; messages: readonly MessageRef[] }): Promise<number>;
}
