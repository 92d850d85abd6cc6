import type { Memory, MemoryCandidate } from '../types';

/** What to do with one extracted candidate, given the user's existing active memories. */
export const DecisionAction = {
  ignore: 'ignore',
  create: 'create',
  reinforce: 'reinforce',
  update: 'update',
  supersede: 'supersede',
  forget: 'forget',
} as const;
export type DecisionAction = (typeof DecisionAction)[keyof typeof DecisionAction];

export type Decision =
  | { action: 'ignore'; reason: string }
  | { action: 'create'; reason: string }
  | { action: 'reinforce'; targetId: string; reason: string }
  | { action: 'update'; targetId: string; reason: string }
  | { action: 'supersede'; targetIds: string[]; reason: string }
  | { action: 'forget'; targetIds: string[]; reason: string };

export interface Neighbour {
  memory: Pick<Memory, 'id' | 'text' | 'type' | 'scope' | 'source'>;
  /** Cosine similarity of the embeddings when the vector route found it, else 0. */
  vectorSimilarity: number;
  /** Token overlap (Jaccard) of the two texts' index tokens. */
  lexicalOverlap: number;
  /** Both texts normalise to the same fact. */
  sameNormalizedFact: boolean;
  /** The candidate's `subject` (what an update/forget is about) occurs in the memory. */
  mentionsSubject: boolean;
}

export interface DecideOptions {
  minConfidence: number;
  /** Cosine similarity above which two statements count as the same fact. */
  dedupSimilarity: number;
  /** A near-duplicate must also share this much vocabulary, so "I love X" never reinforces "I hate X". */
  dedupMinOverlap: number;
}

export const DEFAULT_DECIDE_OPTIONS: DecideOptions = { minConfidence: 0.7, dedupSimilarity: 0.93, dedupMinOverlap: 0.5 };

const fmt = (x: number) => x.toFixed(2);

/**
 * The rule-based conflict resolver (seed §5.3): ignore low confidence; forget requests expire what
 * they name; updates supersede what they contradict (a task-scoped statement never overrides a
 * global one); duplicates reinforce; longer restatements of the same fact update it in place;
 * everything else is created.
 */
export function decide(candidate: MemoryCandidate, neighbours: Neighbour[], options: DecideOptions = DEFAULT_DECIDE_OPTIONS): Decision {
  if (candidate.confidence < options.minConfidence) {
    return { action: 'ignore', reason: `confidence ${fmt(candidate.confidence)} below ${fmt(options.minConfidence)}` };
  }
  const sameSpeaker = neighbours.filter((n) => (n.memory.source.role ?? 'user') === candidate.role);

  if (candidate.intent === 'forget') {
    const targets = sameSpeaker.filter((n) => n.mentionsSubject || n.sameNormalizedFact);
    if (targets.length === 0) return { action: 'ignore', reason: `forget request: no active memory mentions "${candidate.subject ?? ''}"` };
    return {
      action: 'forget',
      targetIds: targets.map((t) => t.memory.id),
      reason: `explicit forget request about "${candidate.subject ?? ''}"`,
    };
  }

  const duplicate = sameSpeaker.find(
    (n) =>
      n.sameNormalizedFact ||
      (n.memory.type === candidate.type && n.vectorSimilarity >= options.dedupSimilarity && n.lexicalOverlap >= options.dedupMinOverlap),
  );

  if (candidate.intent === 'update') {
    const contradicted = sameSpeaker.filter(
      (n) => n.mentionsSubject && !n.sameNormalizedFact && !(candidate.scope === 'task' && n.memory.scope === 'global'),
    );
    if (contradicted.length > 0) {
      return {
        action: 'supersede',
        targetIds: contradicted.map((n) => n.memory.id),
        reason: `update about "${candidate.subject ?? ''}" replaces ${contradicted.length} earlier memor${contradicted.length > 1 ? 'ies' : 'y'}`,
      };
    }
  }

  if (duplicate) {
    if (!duplicate.sameNormalizedFact && candidate.text.length > duplicate.memory.text.length * 1.3) {
      return {
        action: 'update',
        targetId: duplicate.memory.id,
        reason: `restates memory ${duplicate.memory.id} with more detail (similarity ${fmt(duplicate.vectorSimilarity)})`,
      };
    }
    return {
      action: 'reinforce',
      targetId: duplicate.memory.id,
      reason: duplicate.sameNormalizedFact
        ? 'same normalised fact already remembered'
        : `near-duplicate (similarity ${fmt(duplicate.vectorSimilarity)}, overlap ${fmt(duplicate.lexicalOverlap)})`,
    };
  }

  if (candidate.scope === 'task') return { action: 'create', reason: 'task-scoped statement; global preferences stay untouched' };
  return { action: 'create', reason: 'new information' };
}
