/**
 * Importance scoring (checklist M.1): how much a memory matters to the user.
 *
 *   importance = 0.35·frequency + 0.20·recency + 0.25·emotion + 0.20·impact
 *
 * Each component is in [0, 1], so the score is too. The emotion score comes from the emotion
 * analyser (src/core/emotion.ts); this module only combines numbers and never reads the clock.
 */
import type { ImportanceLevel } from '../types';

/** Component weights from the checklist; they sum to 1. */
export const IMPORTANCE_WEIGHTS = {
  frequency: 0.35,
  recency: 0.2,
  emotion: 0.25,
  impact: 0.2,
} as const;

/**
 * Mentions/recalls at which the frequency component saturates. Linear `min(1, n/5)` rather
 * than `1 − e^(−n/3)`: the exponential only reaches 0.81 at five mentions, which makes the
 * M.1 acceptance ("high frequency + strong emotion ⇒ ≥ 0.8") unreachable without topics.
 */
export const FREQUENCY_SATURATION_COUNT = 5;

/** Accesses within this many days count as fully recent ("this week-ish", not "this second"). */
export const RECENCY_GRACE_DAYS = 3;
/** After the grace window, recency decays as e^(−(days − grace)/τ) with this τ in days. */
export const RECENCY_TIME_CONSTANT_DAYS = 30;

/** Associated topics at which the impact component saturates (checklist IMPACT_THRESHOLD). */
export const IMPACT_THRESHOLD = 5;

/**
 * Lower bounds of each level: low < 0.4 ≤ medium < 0.7 ≤ high < 0.85 ≤ critical.
 * 0.7 puts "frequent + emotional" memories (≥ 0.8) in high; critical needs breadth (impact)
 * or near-perfect scores on every component as well.
 */
export const IMPORTANCE_LEVEL_THRESHOLDS = {
  medium: 0.4,
  high: 0.7,
  critical: 0.85,
} as const;

/** Score from which a memory deserves proactive attention (reminders, pinning). */
export const ESCALATION_THRESHOLD = 0.8;

const DAY_MS = 86_400_000;
const LEVEL_ORDER: readonly ImportanceLevel[] = ['low', 'medium', 'high', 'critical'];

/** Raw signals about one memory. */
export interface ImportanceInput {
  /** Times the memory was mentioned again or recalled (Memory.frequencyCount). */
  frequencyCount: number;
  /** Last time the memory was accessed (recalled, confirmed, mentioned). */
  lastAccessedAt: Date;
  /** The evaluation instant, passed in so the function stays pure. */
  now: Date;
  /** Emotional intensity in [0, 1] from the emotion analyser; clamped. */
  emotionScore: number;
  /** Topics the memory is associated with (breadth of impact). */
  associatedTopics: readonly string[];
}

/** Each component in [0, 1], before weighting. */
export interface ImportanceComponents {
  frequency: number;
  recency: number;
  emotion: number;
  impact: number;
}

/** Result of {@link scoreImportance}. */
export interface ImportanceResult {
  /** Weighted sum in [0, 1], rounded to 6 decimals. */
  score: number;
  level: ImportanceLevel;
  components: ImportanceComponents;
}

function clamp01(x: number): number {
  if (Number.isNaN(x)) return 0;
  return Math.min(1, Math.max(0, x));
}

/** Saturating frequency component: `min(1, count / FREQUENCY_SATURATION_COUNT)`. */
export function frequencyComponent(count: number): number {
  return clamp01(count / FREQUENCY_SATURATION_COUNT);
}

/** Recency component: 1 within the grace window, then exponential decay. Future dates count as now. */
export function recencyComponent(lastAccessedAt: Date, now: Date): number {
  const days = Math.max(0, (now.getTime() - lastAccessedAt.getTime()) / DAY_MS);
  if (days <= RECENCY_GRACE_DAYS) return 1;
  return clamp01(Math.exp(-(days - RECENCY_GRACE_DAYS) / RECENCY_TIME_CONSTANT_DAYS));
}

/** Impact component: `min(1, topics / IMPACT_THRESHOLD)`. */
export function impactComponent(associatedTopicCount: number): number {
  return clamp01(associatedTopicCount / IMPACT_THRESHOLD);
}

/** Maps a score to its level using {@link IMPORTANCE_LEVEL_THRESHOLDS}. */
export function importanceLevelFor(score: number): ImportanceLevel {
  if (score >= IMPORTANCE_LEVEL_THRESHOLDS.critical) return 'critical';
  if (score >= IMPORTANCE_LEVEL_THRESHOLDS.high) return 'high';
  if (score >= IMPORTANCE_LEVEL_THRESHOLDS.medium) return 'medium';
  return 'low';
}

/** Computes the importance score, its level and the unweighted components. */
export function scoreImportance(input: ImportanceInput): ImportanceResult {
  const components: ImportanceComponents = {
    frequency: frequencyComponent(input.frequencyCount),
    recency: recencyComponent(input.lastAccessedAt, input.now),
    emotion: clamp01(input.emotionScore),
    impact: impactComponent(new Set(input.associatedTopics).size),
  };
  const w = IMPORTANCE_WEIGHTS;
  const raw =
    w.frequency * components.frequency +
    w.recency * components.recency +
    w.emotion * components.emotion +
    w.impact * components.impact;
  // Rounding removes float noise (0.35 + 0.2 + 0.25 = 0.7999999999999999) that would
  // otherwise drop a score that is exactly on a threshold into the level below.
  const score = clamp01(Math.round(raw * 1e6) / 1e6);
  return { score, level: importanceLevelFor(score), components };
}

/** Orders levels: low < medium < high < critical. */
export function compareLevels(a: ImportanceLevel, b: ImportanceLevel): number {
  return LEVEL_ORDER.indexOf(a) - LEVEL_ORDER.indexOf(b);
}

/**
 * Whether a (re)scored memory should be escalated to proactive attention: its score reaches
 * {@link ESCALATION_THRESHOLD} and, when the previous level is known, its level went up, so
 * a memory that stays important is escalated once rather than on every rescoring.
 */
export function shouldEscalate(result: Pick<ImportanceResult, 'score' | 'level'>, previousLevel?: ImportanceLevel): boolean {
  if (result.score < ESCALATION_THRESHOLD) return false;
  return previousLevel === undefined || compareLevels(result.level, previousLevel) > 0;
}
