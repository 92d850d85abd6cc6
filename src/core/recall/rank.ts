/**
 * Final ranking of recalled memories (M.5 §3.3, guide §5.2 step 4):
 *
 *   score' = relevance × decayFactor × importanceWeight × typeWeight [× 0.5 if decay < 0.5]
 *
 * `relevance` is the fused RRF score (or any non-negative relevance of one route). Every factor
 * is multiplicative so that a memory that does not match the query (relevance 0) can never be
 * lifted by importance alone; importance and type only reorder comparably relevant memories.
 */
import { memoryTypeTable } from '../memory-types';
import type { Memory, MemoryType } from '../types';
import { ARCHIVE_THRESHOLD, DEPRIORITIZE_THRESHOLD, computeDecay } from '../decay';

/**
 * Priority by type (M.5 §5, the `priority` of src/core/memory-types.ts): pain_point > goal >
 * preference = decision > fact = assistant_contribution > event. The gaps (≥ 25 % between pain_point/goal and fact) exceed
 * the spread of RRF scores between neighbouring ranks (1/61 vs 1/62 ≈ 1.6 %), so with
 * comparable relevance pain points and goals are selected before facts under a tight budget,
 * while a fact that matches on more routes (≈ 2× score) still wins.
 * Instructions get the top weight; global ones are injected separately (format.ts) anyway.
 */
export const TYPE_WEIGHTS: Readonly<Record<MemoryType, number>> = memoryTypeTable((d) => d.priority);

/**
 * importanceWeight = floor + (1 − floor)·importance. The seed multiplies by importance outright;
 * a floor of 0.25 keeps a low-importance exact match alive while letting what the user called
 * urgent or very important (importance ≈ 0.9) outrank an idle preference that merely shares a word.
 */
export const IMPORTANCE_WEIGHT_FLOOR = 0.25;

/** Extra multiplier for memories whose decay is below {@link DEPRIORITIZE_THRESHOLD}. */
export const DEPRIORITIZE_FACTOR = 0.5;

/** Default cap on returned memories (guide §5.4: 3–8 lines; budget trims further). */
export const DEFAULT_MAX_RESULTS = 8;

/** What ranking needs of a memory. */
export type RankableMemory = Pick<
  Memory,
  'id' | 'type' | 'status' | 'importance' | 'importanceLevel' | 'lastAccessedAt' | 'expiresAt'
>;

/** A recalled memory with its fused relevance. */
export interface RankCandidate<M extends RankableMemory = RankableMemory> {
  memory: M;
  /** Non-negative relevance, typically the RRF score from fuseRankings. */
  relevance: number;
}

/** Options for {@link rankMemories}. */
export interface RankOptions {
  /** The evaluation instant, passed in so the function stays pure. */
  now: Date;
  /** Drop results whose final score is below this (default 0: keep all). */
  scoreThreshold?: number;
  /** Keep at most this many results (default {@link DEFAULT_MAX_RESULTS}). */
  maxResults?: number;
}

/** A ranked memory with the factors that produced its score (for logs and evaluation). */
export interface RankedMemory<M extends RankableMemory = RankableMemory> {
  memory: M;
  score: number;
  relevance: number;
  decay: number;
  importanceWeight: number;
  typeWeight: number;
  deprioritized: boolean;
}

/** importanceWeight for an importance in [0, 1] (clamped). */
export function importanceWeight(importance: number): number {
  const i = Number.isNaN(importance) ? 0 : Math.min(1, Math.max(0, importance));
  return IMPORTANCE_WEIGHT_FLOOR + (1 - IMPORTANCE_WEIGHT_FLOOR) * i;
}

function isLive(memory: RankableMemory, now: Date): boolean {
  if (memory.status !== 'active') return false;
  return memory.expiresAt === null || memory.expiresAt.getTime() > now.getTime();
}

/**
 * Scores and orders recalled memories. Excludes memories that are not active, already
 * expired, or decayed below the archive threshold (M.5 acceptance: "decay < 0.2 is never
 * injected"), then applies `scoreThreshold` and `maxResults`. The same id given twice keeps
 * its highest relevance. Ties: importance, then id, for a deterministic order.
 */
export function rankMemories<M extends RankableMemory>(
  candidates: readonly RankCandidate<M>[],
  options: RankOptions,
): RankedMemory<M>[] {
  const { now, scoreThreshold = 0, maxResults = DEFAULT_MAX_RESULTS } = options;
  const best = new Map<string, RankCandidate<M>>();
  for (const candidate of candidates) {
    const previous = best.get(candidate.memory.id);
    if (!previous || candidate.relevance > previous.relevance) best.set(candidate.memory.id, candidate);
  }
  // NaN keeps nothing, as `slice(0, NaN)` did.
  const keep = Math.max(0, Math.floor(maxResults)) || 0;
  // Recall keeps eight of some fifty candidates on every message: the best `keep` are held in
  // order as they come instead of sorting them all. The order is total (ids are distinct), so
  // this is the sorted list's prefix exactly.
  const ranked: RankedMemory<M>[] = [];
  for (const { memory, relevance } of best.values()) {
    if (!isLive(memory, now)) continue;
    const decay = computeDecay({ lastAccessedAt: memory.lastAccessedAt, now, importanceLevel: memory.importanceLevel });
    if (decay < ARCHIVE_THRESHOLD) continue;
    const deprioritized = decay < DEPRIORITIZE_THRESHOLD;
    const iw = importanceWeight(memory.importance);
    const tw = TYPE_WEIGHTS[memory.type];
    const rel = Number.isFinite(relevance) ? Math.max(0, relevance) : 0;
    const score = rel * decay * iw * tw * (deprioritized ? DEPRIORITIZE_FACTOR : 1);
    if (score < scoreThreshold) continue;
    // Turned away before anything is made for it, as most candidates are once `keep` are held.
    if (ranked.length === keep && (keep === 0 || !ranksBefore(score, memory, ranked[keep - 1]!))) continue;
    const entry = { memory, score, relevance: rel, decay, importanceWeight: iw, typeWeight: tw, deprioritized };
    let at = ranked.length === keep ? keep - 1 : ranked.length;
    while (at > 0 && ranksBefore(score, memory, ranked[at - 1]!)) {
      ranked[at] = ranked[at - 1]!;
      at--;
    }
    ranked[at] = entry;
  }
  return ranked;
}

/** Whether a memory scored `score` goes before `b`: higher score first, then higher importance, then id in code-unit order (a difference that is NaN decides nothing). */
function ranksBefore(score: number, memory: RankableMemory, b: RankedMemory): boolean {
  const byScore = b.score - score;
  if (byScore) return byScore < 0;
  const byImportance = b.memory.importance - memory.importance;
  if (byImportance) return byImportance < 0;
  return memory.id < b.memory.id;
}
