/**
 * The extraction recall net: the rules are the precise path, and a statement they did not turn
 * into a candidate gets a second look by meaning. Each such statement is embedded (multilingual
 * e5, the same offline model recall uses) and compared with labelled exemplars
 * ({@link PROTOTYPES}): per class, the mean cosine similarity of its k nearest exemplars. A
 * statement becomes a candidate only when its best durable class (a health or life fact, a taste
 * or a habit, a goal, a pain point, an instruction) beats the best "not durable" class (question,
 * small talk, someone else's fact, a one-off request, general knowledge, a passing state) by a
 * calibrated margin. No trigger word is involved: "Shellfish sends me to the ER" and "海鲜一口都
 * 不能碰" are recognised because they mean what the exemplars mean.
 *
 * Everything here is pure apart from the injected {@link StatementEncoder}: the decision functions
 * take vectors, so they are unit-tested with fixed vectors; {@link ExtractionNet} embeds the
 * exemplars once per instance (one per process in the worker) and caches them.
 *
 * The net's candidates carry confidence below the rules' ({@link NET_CONFIDENCE}) and go through
 * the same provenance screen as every other candidate.
 */
import type { Segmenter } from '../text/segmenter';
import type { MemoryCandidate } from '../types';
import { buildCandidate } from './candidate';
import { isUnmetChange } from './changes';
import { BASE_IMPORTANCE, HEALTH_IMPORTANCE, makeMatch } from './match';
import { isDurableClass, NET_CLASS_TYPE, type NetClass, type Prototype, PROTOTYPES } from './prototypes';
import type { NetStatement } from './net-statements';
import { isDirective } from './provenance';
import { isFailureReport } from '../text/utterance-shape';
import { classMeans, ClassVectors, unit } from '../cosine';

// Cosine scoring is shared with recall's follow-up classifier, so it lives in the kernel.
export { classMeans, unit };

/** Turns texts into embedding vectors (any length; normalised or not). The port the net needs. */
export interface StatementEncoder {
  encode(texts: readonly string[]): Promise<number[][]>;
}

/** The calibrated decision parameters. */
export interface NetThresholds {
  /** Exemplars per class averaged into the class score. */
  k: number;
  /** Best durable class score minus best "not durable" class score must reach this. */
  margin: number;
  /** The best durable class score must reach this (an absolute floor for far-off statements). */
  floor: number;
}

/**
 * Tuned on the tune split of test/fixtures/extraction-net/statements.jsonl only (families split
 * before tuning, see split.json); docs/extraction.md has the held-out numbers.
 */
export const NET_THRESHOLDS: NetThresholds = { k: 3, margin: 0.01, floor: 0.8 };

/** Net candidates rank below every rule (rules start at 0.75) and above the 0.7 ingestion bar. */
export const NET_CONFIDENCE = { min: 0.71, max: 0.74 } as const;

/** What the net concluded for one statement. */
export interface NetVerdict {
  /** The winning durable class when the statement is accepted, else null. */
  cls: NetClass | null;
  /** Best durable class and its score. */
  durable: { cls: NetClass; score: number };
  /** Best "not durable" class and its score. */
  none: { cls: NetClass; score: number };
  margin: number;
  /** Candidate confidence when accepted (within {@link NET_CONFIDENCE}), else 0. */
  confidence: number;
}

/** Exemplars with their unit vectors, ready for scoring. */
export class PrototypeIndex {
  readonly classes: ClassVectors<NetClass>;

  constructor(
    readonly prototypes: readonly Prototype[],
    vectors: readonly (readonly number[])[],
  ) {
    if (vectors.length !== prototypes.length) throw new Error(`prototype index: ${prototypes.length} exemplars but ${vectors.length} vectors`);
    this.classes = new ClassVectors(prototypes, vectors.map(unit));
  }
}

/** Per class, the mean cosine similarity of the statement to its `k` nearest exemplars of that class. */
export function classScores(vector: readonly number[], index: PrototypeIndex, k: number): Map<NetClass, number> {
  return classMeans(vector, index.classes, k);
}

/** Confidence for an accepted statement: the floor of {@link NET_CONFIDENCE}, rising with the margin's excess. */
export function netConfidence(margin: number, thresholds: NetThresholds): number {
  const excess = Math.max(0, margin - thresholds.margin);
  const span = NET_CONFIDENCE.max - NET_CONFIDENCE.min;
  return Math.round((NET_CONFIDENCE.min + span * Math.min(1, excess / 0.03)) * 100) / 100;
}

/**
 * The decision for one statement vector: accepted when its best durable class beats the best
 * "not durable" class by `margin` and scores at least `floor`.
 */
export function decideStatement(vector: readonly number[], index: PrototypeIndex, thresholds: NetThresholds = NET_THRESHOLDS): NetVerdict {
  const scores = classScores(vector, index, thresholds.k);
  let durable: { cls: NetClass; score: number } | undefined;
  let none: { cls: NetClass; score: number } | undefined;
  for (const [cls, score] of scores) {
    if (isDurableClass(cls)) {
      if (!durable || score > durable.score) durable = { cls, score };
    } else if (!none || score > none.score) none = { cls, score };
  }
  if (!durable || !none) throw new Error('prototype index needs durable and "not durable" exemplars');
  const margin = durable.score - none.score;
  const accepted = margin >= thresholds.margin && durable.score >= thresholds.floor;
  return { cls: accepted ? durable.cls : null, durable, none, margin, confidence: accepted ? netConfidence(margin, thresholds) : 0 };
}

/**
 * The candidate for an accepted statement, built like a rule's (keywords, entities, emotion,
 * hedges, task scope) at the net's confidence. An "instruction" the user did not word as a
 * directive ("Emojis in answers annoy me") is kept as a preference: the provenance screen only
 * accepts standing instructions the user gave as such.
 */
export function netCandidate(statement: NetStatement, verdict: NetVerdict, zone: string, segmenter: Segmenter): MemoryCandidate | null {
  if (!verdict.cls) return null;
  let type = NET_CLASS_TYPE[verdict.cls]!;
  // English keeps its subject: a fact, taste or goal of the user's names them ("Shellfish
  // allergies are common" is general knowledge). Chinese drops it ("海鲜一口都不能碰").
  if (statement.lang === 'en' && ABOUT_THE_USER.has(type) && !EN_FIRST_PERSON.test(statement.text)) return null;
  if (type === 'instruction' && !isDirective(statement.text)) type = 'preference';
  // e5 puts "the VPN drops every afternoon" near facts and tastes; a plain failure report is a problem.
  if ((type === 'fact' || type === 'preference') && isFailureReport(statement.text, statement.lang)) type = 'pain_point';
  // e5 reads "盼着腰伤早点好" or "Next month I'll try cutting out coffee" as the state itself; not yet so, it is a goal.
  if ((type === 'fact' || type === 'preference') && isUnmetChange(statement.text, statement.lang)) type = 'goal';
  const importance = verdict.cls === 'fact.health' && type === 'fact' ? HEALTH_IMPORTANCE : BASE_IMPORTANCE[type];
  const match = makeMatch(`net.${verdict.cls}`, { type, confidence: verdict.confidence, importance, event: false, standing: type === 'instruction' });
  const seg = { start: statement.start, end: statement.end, match, relations: [], event: statement.shortLived };
  return buildCandidate(seg, { message: statement.message, content: statement.content, lang: statement.lang, zone, segmenter });
}

const ABOUT_THE_USER: ReadonlySet<string> = new Set(['fact', 'preference', 'goal']);
const EN_FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|us|our|ours)\b/iu;

/** Options of {@link ExtractionNet}. */
export interface ExtractionNetOptions {
  thresholds?: NetThresholds;
  prototypes?: readonly Prototype[];
}

/**
 * The net with its exemplar vectors: embedded on first use and cached for the life of the
 * instance (a failed attempt is retried on the next call, never cached).
 */
export class ExtractionNet {
  private index?: Promise<PrototypeIndex>;
  readonly thresholds: NetThresholds;
  private readonly prototypes: readonly Prototype[];

  constructor(
    private readonly encoder: StatementEncoder,
    options: ExtractionNetOptions = {},
  ) {
    this.thresholds = options.thresholds ?? NET_THRESHOLDS;
    this.prototypes = options.prototypes ?? PROTOTYPES;
  }

  /** The exemplar index, embedding the exemplars once. */
  prototypeIndex(): Promise<PrototypeIndex> {
    this.index ??= this.encoder.encode(this.prototypes.map((p) => p.text)).then(
      (vectors) => new PrototypeIndex(this.prototypes, vectors),
      (err: unknown) => {
        this.index = undefined;
        throw err;
      },
    );
    return this.index;
  }

  /** Verdicts for `texts`, in order. */
  async classify(texts: readonly string[]): Promise<NetVerdict[]> {
    if (texts.length === 0) return [];
    const index = await this.prototypeIndex();
    const vectors = await this.encoder.encode(texts);
    if (vectors.length !== texts.length) throw new Error(`encoder returned ${vectors.length} vectors for ${texts.length} texts`);
    return vectors.map((v) => decideStatement(v, index, this.thresholds));
  }

  /** Candidates for the statements the rules left (see {@link selectNetStatements}). */
  async candidates(statements: readonly NetStatement[], zone: string, segmenter: Segmenter): Promise<MemoryCandidate[]> {
    const verdicts = await this.classify(statements.map((s) => s.text));
    return statements.flatMap((s, i) => {
      const c = netCandidate(s, verdicts[i]!, zone, segmenter);
      return c ? [c] : [];
    });
  }
}
