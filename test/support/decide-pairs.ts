/**
 * The conflict resolver on labelled pairs (test/fixtures/decide-pairs, the second set written
 * later in test/fixtures/decide-pairs-2, and the third, of restatements and their look-alikes, in
 * test/fixtures/restatement-pairs): message A was said first
 * and kept, message B comes later. Each message goes through the product path (rules, the net,
 * the provenance screen, the 0.7 bar, as test/support/guard-eval.ts); A's memories become the
 * neighbours of B's candidates with the similarity of their e5 passage vectors, as the vector
 * index would give it, and the rule resolver decides.
 */
import { fileURLToPath } from 'node:url';
import { readJsonl } from './jsonl';
import { unit } from '../../src/core/cosine';
import { decide, DEFAULT_DECIDE_OPTIONS, type DecideOptions } from '../../src/core/decisions/decide';
import type { StatementEncoder } from '../../src/core/extraction/net';
import type { Memory, MemoryCandidate } from '../../src/core/types';
import { toNeighbours } from '../../src/memory/memory-neighbours';
import { keptCandidates } from './guard-eval';

export type PairLabel = 'same' | 'update' | 'different' | 'opposite';
export interface LabelledPair {
  a: string;
  b: string;
  lang: 'zh' | 'en';
  label: PairLabel;
  family: string;
}
/**
 * What became of A's memory when B arrived: reinforced (merged), superseded or forgotten
 * (replaced), its text rewritten with B's (rewritten: the resolver's in-place update), or left
 * beside a new memory (kept-both).
 */
export type PairOutcome = 'merged' | 'rewritten' | 'replaced' | 'kept-both' | 'not-extracted';

/** Passage vectors, as memories are indexed. */
export interface PassageEncoder {
  passages(texts: readonly string[]): Promise<number[][]>;
}

/**
 * The first set, the second one written later to test changes that share no word with the old
 * value, and the third of restatements in other words beside different facts of the same attribute.
 */
export const PAIR_SETS = [1, 2, 3] as const;
export type PairSet = (typeof PAIR_SETS)[number];
const PAIR_SET_FOLDERS: Record<PairSet, string> = { 1: 'decide-pairs', 2: 'decide-pairs-2', 3: 'restatement-pairs' };

export function loadPairs(split: 'tune' | 'holdout', set: PairSet = 1): LabelledPair[] {
  const folder = PAIR_SET_FOLDERS[set];
  const path = fileURLToPath(new URL(`../fixtures/${folder}/${split}.jsonl`, import.meta.url));
  return readJsonl<LabelledPair>(path);
}

/** The outcomes each label accepts: rewriting A with B's text keeps one memory, and B's value. */
export const ACCEPTED: Record<PairLabel, readonly PairOutcome[]> = {
  same: ['merged', 'rewritten'],
  update: ['replaced', 'rewritten'],
  opposite: ['replaced', 'rewritten'],
  different: ['kept-both'],
};

const RANK: Record<PairOutcome, number> = { 'not-extracted': 0, 'kept-both': 1, merged: 2, rewritten: 3, replaced: 4 };

function asMemory(c: MemoryCandidate, id: string, at: Date): Memory {
  return { id, userId: 'u', text: c.text, type: c.type, status: 'active', scope: c.scope, confidence: c.confidence, importance: c.importance, source: { role: c.role }, createdAt: at, updatedAt: at } as unknown as Memory;
}

function cosine(a: readonly number[], b: readonly number[]): number {
  const x = unit(a);
  const y = unit(b);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * y[i]!;
  return s;
}

/** Extraction of both messages, done once; the decision is then cheap to replay with other options. */
export interface PreparedPair {
  pair: LabelledPair;
  memories: Memory[];
  candidates: MemoryCandidate[];
  similarity: Map<string, number>[];
}

export async function preparePair(pair: LabelledPair, net: StatementEncoder, passages: PassageEncoder): Promise<PreparedPair> {
  const first = await keptCandidates({ text: pair.a, lang: pair.lang, kind: 'pair', family: pair.family, expect: 'durable' }, net);
  const later = await keptCandidates({ text: pair.b, lang: pair.lang, kind: 'pair', family: pair.family, expect: 'durable' }, net);
  const memories = first.map((c, i) => asMemory(c, `a${i}`, new Date('2026-01-01T00:00:00Z')));
  const vectors = await passages.passages([...memories.map((m) => m.text), ...later.map((c) => c.text)]);
  const similarity = later.map((_, j) => new Map(memories.map((m, i) => [m.id, cosine(vectors[memories.length + j]!, vectors[i]!)])));
  return { pair, memories, candidates: later, similarity };
}

export function outcomeOf(prepared: PreparedPair, options: DecideOptions = DEFAULT_DECIDE_OPTIONS): PairOutcome {
  if (prepared.memories.length === 0 || prepared.candidates.length === 0) return 'not-extracted';
  let outcome: PairOutcome = 'kept-both';
  prepared.candidates.forEach((candidate, j) => {
    const { action } = decide(candidate, toNeighbours(candidate, prepared.memories, prepared.similarity[j]!), options);
    const now: PairOutcome = action === 'supersede' || action === 'forget' ? 'replaced' : action === 'update' ? 'rewritten' : action === 'reinforce' ? 'merged' : 'kept-both';
    if (RANK[now] > RANK[outcome]) outcome = now;
  });
  return outcome;
}
