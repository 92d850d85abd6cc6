/**
 * Forgetting curve (checklist M.2): decay = exp(−days since last access / τ), where the
 * time constant τ grows with importance.
 *
 * The constants are given as half-lives h (decay = 0.5 after h days), τ = h / ln 2:
 *   - medium: h = 30 days, so a medium memory is at 0.5 after 30 days (acceptance);
 *   - low 15 d, high 90 d: a high memory decays at 1/6 the speed of a low one (acceptance);
 *   - critical 180 d: slower still, keeping the order monotonic.
 */
import { memoryTypeTable } from './memory-types';
import type { ImportanceLevel, MemoryType } from './types';

/** Days after which a memory of each level has decayed to 0.5. */
export const HALF_LIFE_DAYS: Readonly<Record<ImportanceLevel, number>> = {
  low: 15,
  medium: 30,
  high: 90,
  critical: 180,
};

/** Below this a memory is still recalled but ranked down. */
export const DEPRIORITIZE_THRESHOLD = 0.5;
/** Below this a memory is archived and never injected. */
export const ARCHIVE_THRESHOLD = 0.2;

/**
 * Default lifetimes in days per type (`expiryDays` of src/core/memory-types.ts); null means no expiry. Events ("今天要开会") and
 * short-lived states go stale after a month (guide §7.1); everything else lives until
 * decay or an explicit correction retires it.
 */
export const DEFAULT_EXPIRY_DAYS: Readonly<Record<MemoryType, number | null>> = memoryTypeTable((d) => d.expiryDays);

/** Lifetime for a state the extractor flagged as short-lived ("最近在学 Rust"), whatever its type. */
export const SHORT_LIVED_EXPIRY_DAYS = 30;

const DAY_MS = 86_400_000;

/** The time constant τ (days) for a level: τ = half-life / ln 2. */
export function decayTimeConstantDays(level: ImportanceLevel): number {
  return HALF_LIFE_DAYS[level] / Math.LN2;
}

/** Input to {@link computeDecay}. */
export interface DecayInput {
  lastAccessedAt: Date;
  /** The evaluation instant, passed in so the function stays pure. */
  now: Date;
  importanceLevel: ImportanceLevel;
}

/**
 * Decay score in (0, 1]: `exp(−days / τ(level))`, with fractional days. A last access in the
 * future (clock skew between writers) counts as "just now" rather than giving a score > 1.
 */
export function computeDecay({ lastAccessedAt, now, importanceLevel }: DecayInput): number {
  const days = Math.max(0, (now.getTime() - lastAccessedAt.getTime()) / DAY_MS);
  return Math.exp(-days / decayTimeConstantDays(importanceLevel));
}

/** Decay below 0.5: rank the memory down. */
export function shouldDeprioritize(decay: number): boolean {
  return decay < DEPRIORITIZE_THRESHOLD;
}

/** Decay below 0.2: archive the memory. */
export function shouldArchive(decay: number): boolean {
  return decay < ARCHIVE_THRESHOLD;
}

/** Per-type lifetime overrides in days (null = never expires). */
export type ExpiryOverrides = Partial<Record<MemoryType, number | null>>;

/**
 * Default `expiresAt` for a new memory: the moment it was said plus the type's lifetime,
 * or null for long-lived types. Counted from `saidAt`, not from processing time, so a
 * backlog processed late does not extend an event's life.
 */
export function defaultExpiry(type: MemoryType, saidAt: Date, overrides: ExpiryOverrides = {}): Date | null {
  const override = overrides[type];
  const days = override === undefined ? DEFAULT_EXPIRY_DAYS[type] : override;
  if (days === null) return null;
  return new Date(saidAt.getTime() + days * DAY_MS);
}

/** What {@link capacityOverflow} needs of a memory. */
export interface CapacityCandidate {
  id: string;
  type: MemoryType;
  importance: number;
  lastAccessedAt: Date;
}

/**
 * Ids to archive when a user holds more than `cap` active memories: everything after the
 * top `cap` by importance (ties: more recently accessed first, then id). The input is
 * re-sorted rather than trusted. Instructions are never evicted: they are the user's
 * explicit standing orders, and dropping one silently would change behaviour. They still
 * count towards the cap.
 *
 * @throws RangeError when cap is negative or not finite.
 */
export function capacityOverflow(memories: readonly CapacityCandidate[], cap: number): string[] {
  if (!Number.isFinite(cap) || cap < 0) throw new RangeError(`capacity must be a finite number >= 0, got ${cap}`);
  const limit = Math.floor(cap);
  if (memories.length <= limit) return [];
  const sorted = [...memories].sort(
    (a, b) =>
      b.importance - a.importance ||
      b.lastAccessedAt.getTime() - a.lastAccessedAt.getTime() ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const protectedCount = sorted.filter((m) => m.type === 'instruction').length;
  // Slots left for evictable memories once every instruction is kept.
  let slots = Math.max(0, limit - protectedCount);
  const evicted: string[] = [];
  for (const memory of sorted) {
    if (memory.type === 'instruction') continue;
    if (slots > 0) {
      slots -= 1;
      continue;
    }
    evicted.push(memory.id);
  }
  return evicted;
}
