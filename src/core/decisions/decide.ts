import type { Memory, MemoryCandidate } from '../types';
import type { WordingRelation } from './wording';

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
  /** `createdAt` (when it was said) picks the latest problem for a resolution that names none. */
  memory: Pick<Memory, 'id' | 'text' | 'type' | 'scope' | 'source'> & Partial<Pick<Memory, 'createdAt'>>;
  /** Cosine similarity of the embeddings when the vector route found it, else 0. */
  vectorSimilarity: number;
  /** Token overlap (Jaccard) of the two texts' index tokens. */
  lexicalOverlap: number;
  /** Both texts normalise to the same fact. */
  sameNormalizedFact: boolean;
  /** The candidate's `subject` (what an update/forget is about) occurs in the memory. */
  mentionsSubject: boolean;
  /** The candidate likes what the memory dislikes, or the other way round (./stance.ts). */
  reversesStance?: boolean;
  /** What the candidate's words say of the memory's: the same, the same and more, a changed value, an ending, another fact, or nothing (./wording.ts). */
  wording?: WordingRelation;
}

export interface DecideOptions {
  minConfidence: number;
  /** Cosine similarity above which two statements count as the same fact. */
  dedupSimilarity: number;
  /** A near-duplicate must also share this much vocabulary, so "I love X" never reinforces "I hate X". */
  dedupMinOverlap: number;
  /** Cosine similarity above which a statement about the same one-value attribute, in other words, rewrites the memory (./attributes.ts). */
  attributeSimilarity: number;
}

export const DEFAULT_DECIDE_OPTIONS: DecideOptions = { minConfidence: 0.7, dedupSimilarity: 0.93, dedupMinOverlap: 0.5, attributeSimilarity: 0.85 };

const fmt = (x: number) => x.toFixed(2);
/** The types whose statements like or dislike something (a later complaint may reverse one too: "微信读书太难用了"). */
const STANCE_TYPES: ReadonlySet<string> = new Set(['preference', 'fact']);

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
  // A task-scoped statement never overrides a global one.
  const overrides = (n: Neighbour) => !(candidate.scope === 'task' && n.memory.scope === 'global');
  // "我现在住上海了" after "我住在杭州": the words say the value changed, whatever the embeddings
  // say. One statement changes one value: the closest memory it changes, not every one that
  // shares a word with it. A problem is not a value: a new one stands beside it, and only its
  // resolution or an ending of what it names ("微信读书卸了") ends it.
  const changing = sameSpeaker.filter(
    (n) => (n.wording === 'ends' || (n.wording === 'replaces' && n.memory.type !== 'pain_point') || (n.wording === 'reassigns' && reassignable(candidate.type, n.memory.type))) && overrides(n),
  );
  const changed = changing.length > 0 ? [best(changing, (a, b) => a.vectorSimilarity - b.vectorSimilarity || a.lexicalOverlap - b.lexicalOverlap)] : [];

  if (candidate.intent === 'forget') {
    const targets = sameSpeaker.filter((n) => n.mentionsSubject || n.sameNormalizedFact);
    if (targets.length === 0) return { action: 'ignore', reason: `forget request: no active memory mentions "${candidate.subject ?? ''}"` };
    return {
      action: 'forget',
      targetIds: targets.map((t) => t.memory.id),
      reason: `explicit forget request about "${candidate.subject ?? ''}"`,
    };
  }

  if (candidate.intent === 'resolve') {
    const resolved = resolvedPainPoints(candidate, sameSpeaker);
    if (resolved.length > 0) {
      return {
        action: 'supersede',
        targetIds: resolved.map((n) => n.memory.id),
        reason: candidate.subject
          ? `the user says the problem with "${candidate.subject}" is over: resolves ${resolved.length} open pain point${resolved.length > 1 ? 's' : ''}`
          : 'the user says the problem is over without naming it: resolves the most recent open pain point',
      };
    }
    // "生酮停了" ends what "我在吃生酮饮食" said, though it names no subject and no problem was open.
    if (!candidate.subject && changed.length === 0) return { action: 'ignore', reason: 'a resolution that names nothing, and no open pain point to resolve' };
  }

  const duplicate =
    sameSpeaker.find(
      (n) =>
        n.sameNormalizedFact ||
        // "我对海鲜过敏" is as close to "我对芒果过敏" (0.96 on e5) as a restatement: the words veto.
        (n.memory.type === candidate.type && n.vectorSimilarity >= options.dedupSimilarity && n.lexicalOverlap >= options.dedupMinOverlap && n.wording !== 'differs'),
    ) ??
    sameSpeaker.find(
      (n) =>
        (n.wording === 'restates' || (n.wording === 'elaborates' && overrides(n))) && mayRestate(candidate.type, n.memory.type),
    );

  // A resolution no open problem matches ("我的过敏好了" beside "我对花生过敏") changes a fact like an update.
  if (candidate.intent === 'update' || candidate.intent === 'resolve') {
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

  // "我讨厌香菜" after "我爱吃香菜": the taste changed, whatever the embeddings say about closeness.
  if (candidate.intent === 'assert' && (STANCE_TYPES.has(candidate.type) || candidate.type === 'pain_point')) {
    const reversed = sameSpeaker.filter((n) => n.reversesStance && STANCE_TYPES.has(n.memory.type) && !(candidate.scope === 'task' && n.memory.scope === 'global'));
    if (reversed.length > 0) {
      return {
        action: 'supersede',
        targetIds: reversed.map((n) => n.memory.id),
        reason: `reverses the stance of ${reversed.length} earlier memor${reversed.length > 1 ? 'ies' : 'y'} on the same thing`,
      };
    }
  }

  if (changed.length > 0) {
    return {
      action: 'supersede',
      targetIds: changed.map((n) => n.memory.id),
      reason: `says the value of memory ${changed[0]!.memory.id} changed`,
    };
  }

  if (duplicate) {
    const elaborates = duplicate.wording === 'elaborates' && !duplicate.sameNormalizedFact;
    if (elaborates || (!duplicate.sameNormalizedFact && duplicate.wording !== 'restates' && candidate.text.length > duplicate.memory.text.length * 1.3)) {
      return {
        action: 'update',
        targetId: duplicate.memory.id,
        reason: elaborates
          ? `says all memory ${duplicate.memory.id} says, and more`
          : `restates memory ${duplicate.memory.id} with more detail (similarity ${fmt(duplicate.vectorSimilarity)})`,
      };
    }
    return {
      action: 'reinforce',
      targetId: duplicate.memory.id,
      reason: duplicate.sameNormalizedFact
        ? 'same normalised fact already remembered'
        : duplicate.wording === 'restates'
          ? `says what memory ${duplicate.memory.id} says, in other order or words`
          : `near-duplicate (similarity ${fmt(duplicate.vectorSimilarity)}, overlap ${fmt(duplicate.lexicalOverlap)})`,
    };
  }

  // "cycling is how I get to the office" after "I bike to work": one value at a time, so the later
  // words restate it or change it unsaid; keeping them in the old memory's place loses neither.
  const sameAttribute = sameSpeaker.filter(
    (n) => n.wording === 'same-attribute' && n.vectorSimilarity >= options.attributeSimilarity && LASTING.has(candidate.type) && LASTING.has(n.memory.type) && overrides(n),
  );
  if (sameAttribute.length > 0) {
    const target = best(sameAttribute, (a, b) => a.vectorSimilarity - b.vectorSimilarity);
    return { action: 'update', targetId: target.memory.id, reason: `says the attribute memory ${target.memory.id} holds in other words (similarity ${fmt(target.vectorSimilarity)})` };
  }

  if (candidate.scope === 'task') return { action: 'create', reason: 'task-scoped statement; global preferences stay untouched' };
  return { action: 'create', reason: 'new information' };
}

/**
 * Whether a statement may give a new value to the attribute a memory holds, though no word of
 * theirs is shared (./attributes.ts): a lasting fact, taste or goal, by a fact, a taste or a
 * dated event ("just moved to Dallas last month"). A complaint is no new value, and a problem or
 * an event that expires holds none.
 */
function reassignable(candidateType: string, memoryType: string): boolean {
  return (LASTING.has(candidateType) || candidateType === 'event') && (LASTING.has(memoryType) || memoryType === 'goal');
}

/**
 * Whether a statement of one type may restate a memory of another: the same type, or a fact and a
 * preference (the line the extractor draws least surely: "I usually go to bed around 11"). An
 * event expires and a goal is not yet so, so neither merges with anything else.
 */
function mayRestate(a: string, b: string): boolean {
  return a === b || (LASTING.has(a) && LASTING.has(b));
}
const LASTING: ReadonlySet<string> = new Set(['fact', 'preference']);

/**
 * The open pain points a resolution ends: those that mention its subject; else the one sharing
 * most of its words ("鼻炎这阵子没犯了" and "我的鼻炎老是犯"); else, when it names nothing ("修好了",
 * "it works now"), the one raised last.
 */
function resolvedPainPoints(candidate: MemoryCandidate, sameSpeaker: readonly Neighbour[]): Neighbour[] {
  const open = sameSpeaker.filter((n) => n.memory.type === 'pain_point' && !(candidate.scope === 'task' && n.memory.scope === 'global'));
  if (candidate.subject) {
    const named = open.filter((n) => n.mentionsSubject);
    if (named.length > 0) return named;
  }
  const sharing = open.filter((n) => n.lexicalOverlap > 0);
  if (sharing.length > 0) return [best(sharing, (a, b) => a.lexicalOverlap - b.lexicalOverlap || saidAt(a) - saidAt(b))];
  if (candidate.subject || open.length === 0) return [];
  return [best(open, (a, b) => saidAt(a) - saidAt(b) || (a.memory.id > b.memory.id ? 1 : -1))];
}

const saidAt = (n: Neighbour) => n.memory.createdAt?.getTime() ?? 0;

/** The greatest of a non-empty list by `cmp`. */
function best<T>(items: readonly T[], cmp: (a: T, b: T) => number): T {
  return items.reduce((top, x) => (cmp(x, top) > 0 ? x : top));
}
