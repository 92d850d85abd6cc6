/**
 * Vague follow-ups: a query that refers back to an earlier problem without naming it ("还是不行",
 * "那个问题又出现了", "it's happening again", "any update on that?"). Ordinary retrieval has nothing
 * to match such a query on: its only words are pronouns, aspect adverbs and generic predicates,
 * which every memory or none shares. Recall answers it with the user's most recent open pain point.
 *
 * The class is detected structurally, not by a list of whole phrases:
 * 1. the query is short (a refer-back is a turn of conversation, not a request);
 * 2. it carries a refer-back cue: an anaphor ("那个/它/that/it"), a persistence or recurrence
 *    aspect ("还是/又/依然/still/again/back"), or a status question ("进展/怎么样了/any update");
 * 3. after segmentation nothing names a thing: every word is a function word (jieba's pronoun,
 *    adverb, conjunction, particle, time … tags; English function words) or belongs to the closed
 *    class of generic problem vocabulary ("问题/情况/不行/坏/出现", "issue/thing/broken/happen").
 * "payment-svc 还是超时", "打印机又卡纸了", "the wifi is still slow" fail (3): they name the thing,
 * and the memory routes find it by name.
 *
 * The word rules are the precise path; they cannot know every wording ("那事儿后来怎么样了",
 * "your fix didn't work"). A net by meaning catches the rest: the query's e5 vector (the one recall
 * computes anyway) is compared with labelled prototype queries ({@link FOLLOW_UP_PROTOTYPES}):
 * the mean cosine of its k nearest refer-back prototypes must beat every negative class (a problem
 * that names its thing, a new question, small talk, a statement) by a calibrated margin
 * ({@link followUpByMeaning}).
 *
 * Pure: the segmenter and the vectors are parameters (jieba and the embedder live outside core).
 * Labelled wordings, split before tuning, are in test/fixtures/recall-followup/queries.jsonl;
 * docs/recall.md has the held-out numbers.
 */
import { ClassVectors, unit } from '../cosine';
import type { Segmenter } from '../text/segmenter';
import type { Memory } from '../types';
import type { FollowUpClass, FollowUpPrototype } from './follow-up-prototypes';

/** Longest refer-back, in code points for Chinese and words for English. */
export const MAX_FOLLOW_UP_CODE_POINTS = 16;
export const MAX_FOLLOW_UP_WORDS = 9;

/** Refer-back cues in Chinese: persistence/recurrence aspect and status questions. */
const ZH_CUE = /之前|上次|刚才|一样|老样子|老问题|还是|还没|又|依然|依旧|仍然|仍|照旧|再次|复发|进展|怎么样了|搞定了|好了没|好了吗|还在/u;
/** Anaphors: a cue only beside a generic problem word ("那个怎么办"), not alone ("这个呢"). */
const ZH_ANAPHOR = /那个|这个|那件|这件|那事|这事|那边|它/u;

/**
 * Generic Chinese problem vocabulary: the nouns and predicates any problem shares, none of which
 * names one. Longest first, so a compound is removed before its parts.
 */
const ZH_GENERIC = [
  '一模一样', '出问题', '老样子', '老问题', '没变化', '没反应', '没好转', '怎么办', '怎么样', '没解决', '不工作',
  '问题', '事情', '情况', '毛病', '错误', '东西', '样子', '变化', '好转', '反应', '进展', '状况',
  '不行', '没用', '出现', '出错', '报错', '失败', '解决', '搞定', '修好', '卡住', '开始', '复发', '工作', '依旧',
  '事', '错', '老', '出', '坏', '挂', '好', '来', '犯', '修', '卡', '变', '没', '有', '在', '用', '样', '了', '呢', '吗', '啊', '吧', '呀', '的', '还', '又', '再',
];

/** jieba tags of words that never name a thing: pronouns, adverbs, conjunctions, particles, time, numbers … */
const ZH_FUNCTION_TAGS = /^(?:[rc-fpuyotmqx]|rr|rz|ul|uj|uz|ug|uv|ud|tg|mq|zg)$/u;

/** English function words (a superset of the index stopwords: negations and auxiliaries too). */
const EN_FUNCTION = new Set(
  (
    "a an the is are was were be been am do does did doing done have has had get got gets will would can could should " +
    "it it's its this that that's these those there here one one's same as before again still yet back now today tonight yesterday " +
    "any some no not nope never ever no. n't isn't doesn't didn't don't won't wasn't aren't hasn't haven't " +
    "to of on in at for with by from up out about over into off so then just even too " +
    "how how's what what's whats why when did ever and or but ugh hmm well oh ok okay yeah yes hey " +
    "i i'm me my you your we us our they them last time earlier previous previously while ago day week"
  ).split(' '),
);

/** Generic English problem vocabulary (inflections included): names no problem in particular. */
const EN_GENERIC = new Set(
  (
    "thing things stuff problem problems issue issues error errors bug bugs update updates news progress situation matter luck fix " +
    "work works working worked broke broken break breaks fail fails failed failing failure happen happens happening happened " +
    "help helped fixed crash crashes crashed slow stuck acting act persist persists keep keeps kept come comes came coming " +
    "start starts started going go goes gone square same-old"
  ).split(' '),
);

/** English refer-back cues: persistence/recurrence aspect and status questions. */
const EN_CUE = /\b(?:same|before|again|still|yet|back|persists?|keeps?|update|news|progress|anymore|last time)\b/iu;
/** Anaphors: a cue only beside a generic problem word ("it crashed"), not alone ("got it"). */
const EN_ANAPHOR = /\b(?:it|that|this|those)\b/iu;

const HAN = /\p{Script=Han}/u;
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** What the detector saw (for logs and the labelled-set report). */
export interface FollowUpVerdict {
  referBack: boolean;
  /** The refer-back cue found, if any. */
  cue?: string;
  /** Words that name something (any one of them makes the query specific). */
  content: string[];
}

function chineseWords(query: string, segmenter: Segmenter): { content: string[]; generic: boolean } {
  const content: string[] = [];
  let generic = false;
  for (const { word, tag } of segmenter.tag(query)) {
    if (!WORD_CHAR.test(word) || ZH_FUNCTION_TAGS.test(tag)) continue;
    if (!HAN.test(word)) {
      // A Latin run inside a Chinese query: an English function or generic word, else a name.
      if (EN_GENERIC.has(word.toLowerCase())) generic = true;
      else if (!EN_FUNCTION.has(word.toLowerCase())) content.push(word);
      continue;
    }
    // jieba glues short phrases ("又坏了", "很卡"): strip the generic vocabulary, keep what remains.
    let rest = word;
    for (const g of ZH_GENERIC) rest = rest.split(g).join('');
    rest = rest.replace(/[很太真都也就才再]/gu, '');
    if (rest.length > 0) content.push(word);
    else generic = true;
  }
  return { content, generic };
}

function englishWords(query: string): string[] {
  return (query.toLowerCase().replace(/[’‘]/gu, "'").match(/[\p{L}\p{N}]+(?:'\p{L}+)?/gu) ?? []);
}

/** Reads whether `query` is a vague refer-back (see the module comment). */
export function detectFollowUp(query: string, segmenter: Segmenter): FollowUpVerdict {
  const text = query.normalize('NFKC').trim();
  if (text.length === 0) return { referBack: false, content: [] };
  if (HAN.test(text)) {
    if (Array.from(text.replace(/\s+/gu, '')).length > MAX_FOLLOW_UP_CODE_POINTS) return { referBack: false, content: [] };
    const { content, generic } = chineseWords(text, segmenter);
    const cue = ZH_CUE.exec(text)?.[0] ?? EN_CUE.exec(text)?.[0] ?? (generic ? (ZH_ANAPHOR.exec(text)?.[0] ?? EN_ANAPHOR.exec(text)?.[0]) : undefined);
    return { referBack: cue !== undefined && content.length === 0, ...(cue ? { cue } : {}), content };
  }
  const words = englishWords(text);
  if (words.length === 0 || words.length > MAX_FOLLOW_UP_WORDS) return { referBack: false, content: [] };
  const content = words.filter((w) => !EN_FUNCTION.has(w) && !EN_GENERIC.has(w));
  const generic = words.some((w) => EN_GENERIC.has(w));
  const cue = EN_CUE.exec(text)?.[0] ?? (generic ? EN_ANAPHOR.exec(text)?.[0] : undefined);
  return { referBack: cue !== undefined && content.length === 0, ...(cue ? { cue } : {}), content };
}

// ─── The net by meaning ──────────────────────────────────────────────────────────────────────────

/** The calibrated decision of the net. */
export interface FollowUpNetThresholds {
  /** Prototypes per class averaged into the class score. */
  k: number;
  /** The refer-back score minus the best negative class score must reach this. */
  margin: number;
  /** The refer-back score must reach this. */
  floor: number;
}

/** Tuned on the dev split of queries.jsonl only (`npm run bench -- followup`); see docs/recall.md. */
export const FOLLOW_UP_NET_THRESHOLDS: FollowUpNetThresholds = { k: 3, margin: 0.03, floor: 0.86 };

/** A refer-back is a turn of conversation: longer queries are requests, and the net leaves them alone. */
export const MAX_NET_CODE_POINTS = 24;
export const MAX_NET_WORDS = 12;

/** Prototypes with their unit vectors, grouped by class. */
export interface FollowUpPrototypeIndex {
  prototypes: readonly FollowUpPrototype[];
  classes: ClassVectors<FollowUpClass>;
}

export function followUpPrototypeIndex(prototypes: readonly FollowUpPrototype[], vectors: readonly (readonly number[])[]): FollowUpPrototypeIndex {
  if (vectors.length !== prototypes.length) throw new Error(`follow-up prototypes: ${prototypes.length} texts but ${vectors.length} vectors`);
  return { prototypes, classes: new ClassVectors(prototypes, vectors.map(unit)) };
}

/** Whether the net may look at `query` at all: short enough to be a turn of conversation. */
export function netMayJudge(query: string): boolean {
  const text = query.normalize('NFKC').trim();
  if (text.length === 0) return false;
  if (HAN.test(text)) return Array.from(text.replace(/\s+/gu, '')).length <= MAX_NET_CODE_POINTS;
  const words = englishWords(text).length;
  return words > 0 && words <= MAX_NET_WORDS;
}

export interface FollowUpNetVerdict {
  referBack: boolean;
  /** Mean cosine of the k nearest refer-back prototypes. */
  score: number;
  /** The best negative class and its score. */
  against: { cls: FollowUpClass; score: number };
}

function referBackScore(v: Float64Array, index: FollowUpPrototypeIndex, t: FollowUpNetThresholds): number {
  return index.classes.meanOfNearest(v, 'refer_back', t.k) ?? 0;
}

function bestNegativeClass(v: Float64Array, index: FollowUpPrototypeIndex, t: FollowUpNetThresholds): FollowUpNetVerdict['against'] {
  let against: FollowUpNetVerdict['against'] = { cls: 'names_thing', score: -1 };
  for (const cls of index.classes.classes()) {
    if (cls === 'refer_back') continue;
    const score = index.classes.meanOfNearest(v, cls, t.k)!;
    if (score > against.score) against = { cls, score };
  }
  return against;
}

function passes(score: number, against: number, t: FollowUpNetThresholds): boolean {
  return score >= t.floor && score - against >= t.margin;
}

/** Per class, the mean cosine of the query to its k nearest prototypes; the refer-back class against the best other. */
export function followUpByMeaning(vector: readonly number[], index: FollowUpPrototypeIndex, t: FollowUpNetThresholds = FOLLOW_UP_NET_THRESHOLDS): FollowUpNetVerdict {
  const v = unit(vector);
  const score = referBackScore(v, index, t);
  const against = bestNegativeClass(v, index, t);
  return { referBack: passes(score, against.score, t), score, against };
}

/**
 * {@link followUpByMeaning}'s verdict alone, for recall: the refer-back class is scored first, and
 * a query it leaves below the floor (most queries) is answered without scoring the other classes,
 * which cannot raise it — two thirds of the arithmetic, on every message.
 */
export function isReferBackByMeaning(vector: readonly number[], index: FollowUpPrototypeIndex, t: FollowUpNetThresholds = FOLLOW_UP_NET_THRESHOLDS): boolean {
  const v = unit(vector);
  const score = referBackScore(v, index, t);
  if (!(score >= t.floor)) return false;
  return passes(score, bestNegativeClass(v, index, t).score, t);
}

/** What deciding "open" needs of a memory. */
export type PainPointLike = Pick<Memory, 'id' | 'type' | 'status' | 'supersededBy' | 'expiresAt' | 'metadata' | 'createdAt'>;

/**
 * A pain point is open while it is active, unexpired and not replaced (a later memory superseding
 * it is how the write path records that things changed), and nothing marked it resolved
 * (`metadata.resolvedAt` or `metadata.resolved: true`, for a client or a later workflow to set).
 */
export function isOpenPainPoint(m: PainPointLike, now: Date): boolean {
  if (m.type !== 'pain_point' || m.status !== 'active' || m.supersededBy !== null) return false;
  if (m.expiresAt !== null && m.expiresAt.getTime() <= now.getTime()) return false;
  const meta = m.metadata ?? {};
  return !(meta['resolved'] === true || (typeof meta['resolvedAt'] === 'string' && meta['resolvedAt'].length > 0));
}

/** The open pain point raised last (when it was said; ties: the id, for a stable answer). */
export function latestOpenPainPoint<M extends PainPointLike>(candidates: readonly M[], now: Date): M | undefined {
  let best: M | undefined;
  for (const m of candidates) {
    if (!isOpenPainPoint(m, now)) continue;
    if (!best || m.createdAt > best.createdAt || (m.createdAt.getTime() === best.createdAt.getTime() && m.id > best.id)) best = m;
  }
  return best;
}
