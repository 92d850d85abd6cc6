import { emotionScore } from '../emotion';
import { importanceLevelFor, scoreImportance } from './importance';
import type { Memory } from '../types';

/**
 * Importance of a memory from its signals (checklist M.1 weights, src/core/lifecycle/importance),
 * never below `prior` — the extractor's prior for a new memory, the current importance for a
 * reinforcement or restore, so an access never lowers it. Every write path calls this and stores
 * the components next to the score (`importance_components`).
 */
export function importanceFor(input: {
  text: string;
  frequencyCount: number;
  lastAccessedAt: Date;
  now: Date;
  associatedTopics: string[];
  prior: number;
}): { score: number; level: Memory['importanceLevel']; components: Record<string, number> } {
  const emotion = emotionScore(input.text).score;
  const result = scoreImportance({
    frequencyCount: input.frequencyCount,
    lastAccessedAt: input.lastAccessedAt,
    now: input.now,
    emotionScore: emotion,
    associatedTopics: input.associatedTopics,
  });
  const score = Math.max(result.score, Math.min(1, input.prior));
  return { score, level: importanceLevelFor(score), components: { ...result.components, prior: input.prior, weighted: result.score } };
}
