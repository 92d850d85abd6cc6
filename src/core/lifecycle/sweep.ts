/**
 * The lifecycle sweep's decisions, as pure functions. The sweep itself runs as set-based SQL
 * (src/adapters/postgres/lifecycle-repository.ts) over every user's memories; these functions
 * state the same rules in TypeScript so tests can compute the expected outcome row by row and
 * so the SQL receives its constants from here rather than from copies.
 */
import type { ImportanceLevel, MemoryStatus, MemoryType } from '../types';
import { ARCHIVE_THRESHOLD, computeDecay, decayTimeConstantDays, HALF_LIFE_DAYS } from '../decay';
import { SweepAction, type LifecycleTransition } from '../ports/lifecycle';

// The lifecycle port's page results name the sweep's actions, so they live with the port.
export { SweepAction, type LifecycleTransition };

/** What {@link sweepDecision} needs of a memory. */
export interface SweepCandidate {
  status: MemoryStatus;
  type: MemoryType;
  importanceLevel: ImportanceLevel;
  lastAccessedAt: Date;
  expiresAt: Date | null;
}

/** Result of {@link sweepDecision}. */
export interface SweepDecision {
  /** The decay score the sweep stores for the memory (null for memories the decay pass skips). */
  decay: number | null;
  action: SweepAction | null;
}

/**
 * The daily sweep's rule for one memory at `now`:
 *   - active and `expiresAt <= now` → expire (expiry wins over decay: the memory is stale, not merely quiet);
 *   - active and decay < {@link ARCHIVE_THRESHOLD} → archive, except standing instructions: they are
 *     the user's explicit orders, injected on every message, and silently dropping one after a
 *     long holiday would change the assistant's behaviour (the capacity cap spares them too);
 *   - archived and `expiresAt <= now` → expire (an archived event must not be restorable after its life ended);
 *   - otherwise nothing (active memories still get their decay score refreshed).
 */
export function sweepDecision(memory: SweepCandidate, now: Date): SweepDecision {
  const expired = memory.expiresAt !== null && memory.expiresAt.getTime() <= now.getTime();
  if (memory.status === 'archived') return { decay: null, action: expired ? SweepAction.expire : null };
  if (memory.status !== 'active') return { decay: null, action: null };
  const decay = computeDecay({ lastAccessedAt: memory.lastAccessedAt, now, importanceLevel: memory.importanceLevel });
  if (expired) return { decay, action: SweepAction.expire };
  return { decay, action: decay < ARCHIVE_THRESHOLD && memory.type !== 'instruction' ? SweepAction.archive : null };
}

/**
 * The decay time constants as two parallel arrays, the shape SQL takes them in
 * (`unnest($levels::text[], $taus::float8[])`), so the SQL and {@link computeDecay} share one source.
 */
export function decayConstantsForSql(): { levels: ImportanceLevel[]; tauDays: number[] } {
  const levels = Object.keys(HALF_LIFE_DAYS) as ImportanceLevel[];
  return { levels, tauDays: levels.map(decayTimeConstantDays) };
}

/**
 * How far the stored `decay_score` may drift before the sweep rewrites it. Recall and the sweep's
 * own decisions compute decay exactly from `last_accessed_at`; the column is a cached value for
 * display and reporting. Rewriting every row daily for changes in the third decimal would make a
 * million-memory sweep mostly index maintenance, so rows are rewritten only when their stored
 * score is off by more than this.
 */
export const DECAY_SCORE_TOLERANCE = 0.01;

/** Levels the weekly job reinforces (seed M.2.3 auto_reinforce: "定期强化 high 级别"; critical is above high). */
export const AUTO_REINFORCE_LEVELS: readonly ImportanceLevel[] = ['high', 'critical'];

/** Why a restore is refused; null when the memory may be restored. */
export type RestoreRefusal = 'already_active' | 'not_archived' | 'past_expiry';

/**
 * Only archived memories come back: expired ones were forgotten on purpose (by the user or by
 * their lifetime), superseded ones were replaced. An archived memory whose `expiresAt` has passed
 * is refused too — the next sweep expires it.
 */
export function restoreRefusal(memory: Pick<SweepCandidate, 'status' | 'expiresAt'>, now: Date): RestoreRefusal | null {
  if (memory.status === 'active') return 'already_active';
  if (memory.status !== 'archived') return 'not_archived';
  if (memory.expiresAt !== null && memory.expiresAt.getTime() <= now.getTime()) return 'past_expiry';
  return null;
}

/** Counters of one sweep (summed over batches and continue-as-new runs). */
export interface SweepCounts {
  /** Active memories whose decay was evaluated. */
  scanned: number;
  /** Rows written (decay score changed, or status changed). */
  updated: number;
  archived: number;
  expired: number;
  /** Archived because the user held more than the capacity cap. */
  capacityArchived: number;
  /** Vector deletions confirmed by Chroma. */
  vectorsRemoved: number;
}

/** A sweep with nothing done yet. */
export function emptySweepCounts(): SweepCounts {
  return { scanned: 0, updated: 0, archived: 0, expired: 0, capacityArchived: 0, vectorsRemoved: 0 };
}

/** Field-wise sum of two count records. */
export function addSweepCounts(a: SweepCounts, b: Partial<SweepCounts>): SweepCounts {
  return {
    scanned: a.scanned + (b.scanned ?? 0),
    updated: a.updated + (b.updated ?? 0),
    archived: a.archived + (b.archived ?? 0),
    expired: a.expired + (b.expired ?? 0),
    capacityArchived: a.capacityArchived + (b.capacityArchived ?? 0),
    vectorsRemoved: a.vectorsRemoved + (b.vectorsRemoved ?? 0),
  };
}

/**
 * Most transitions a workflow result lists. A first sweep over a large backlog can archive
 * hundreds of thousands of memories; the counts are exact, the list is a sample, and every
 * transition is in `memory_events` with the workflow's id and run id.
 */
export const MAX_LISTED_TRANSITIONS = 1000;

/** Progress of one lifecycle step (a run of pages), also its result. */
export interface LifecycleStepResult {
  /** Where the next step resumes (memory id, or user id for the capacity step); null at the start. */
  cursor: string | null;
  done: boolean;
  counts: SweepCounts;
  /** A sample of what changed, at most {@link MAX_LISTED_TRANSITIONS}. */
  transitions: LifecycleTransition[];
  truncated: boolean;
}

/** Appends to a capped list; reports whether anything was left out. */
export function appendCapped<T>(list: readonly T[], more: readonly T[], cap: number): { list: T[]; truncated: boolean } {
  const room = Math.max(0, cap - list.length);
  return { list: [...list, ...more.slice(0, room)], truncated: more.length > room };
}
