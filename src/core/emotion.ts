/**
 * Emotion keyword table and scorer (checklist M.1.2).
 *
 * The weight of a keyword says how much the speaker cares: urgency and distress rank high, stated
 * indifference ("无所谓", "whatever") ranks low. Extraction uses it to fill `emotionTags` and to
 * raise importance; importance scoring reuses the same table, so it lives outside the extractor.
 * Pure: no I/O, deterministic.
 */

/**
 * Keyword → weight in [0, 1]. Chinese keys match as substrings; Latin keys match whole words,
 * case-insensitively, and a trailing `*` matches any word ending ("frustrat*" → "frustrating").
 * Longer overlapping keys win ("不急" over "急", "很重要" over "重要") so that a negated or
 * intensified form carries its own weight.
 */
export const EMOTION_KEYWORDS: Readonly<Record<string, number>> = Object.freeze({
  // zh: urgency
  急: 1.0,
  紧急: 1.0,
  着急: 1.0,
  急需: 1.0,
  十万火急: 1.0,
  火烧眉毛: 1.0,
  尽快: 0.9,
  赶紧: 0.9,
  // zh: importance
  很重要: 0.9,
  非常重要: 0.9,
  特别重要: 0.9,
  最重要: 0.9,
  十分重要: 0.9,
  超级重要: 0.9,
  重要: 0.8,
  // zh: distress
  困扰: 0.8,
  头疼: 0.8,
  头痛: 0.8,
  崩溃: 0.8,
  抓狂: 0.8,
  焦虑: 0.8,
  烦死了: 0.8,
  受不了: 0.8,
  痛苦: 0.8,
  苦恼: 0.7,
  郁闷: 0.6,
  很烦: 0.6,
  心烦: 0.6,
  烦人: 0.6,
  担心: 0.7,
  担忧: 0.7,
  害怕: 0.7,
  紧张: 0.6,
  // zh: wish to fix
  想解决: 0.6,
  希望解决: 0.6,
  想搞定: 0.6,
  // zh: indifference and negated forms (low on purpose)
  无所谓: 0.1,
  都行: 0.1,
  随便: 0.1,
  不在乎: 0.1,
  不重要: 0.1,
  不急: 0.2,
  不着急: 0.2,
  不用急: 0.2,
  不担心: 0.2,
  // en: urgency
  urgent: 1.0,
  urgently: 1.0,
  asap: 1.0,
  'as soon as possible': 1.0,
  emergency: 1.0,
  'right away': 0.9,
  critical: 0.9,
  // en: importance
  'very important': 0.9,
  'really important': 0.9,
  'super important': 0.9,
  'extremely important': 0.9,
  'so important': 0.9,
  crucial: 0.9,
  important: 0.8,
  // en: distress
  'bothers me': 0.8,
  'bothering me': 0.8,
  'frustrat*': 0.8,
  'drives me crazy': 0.8,
  'driving me crazy': 0.8,
  'drives me nuts': 0.8,
  'killing me': 0.8,
  stressed: 0.8,
  stressful: 0.8,
  anxious: 0.8,
  'freaking out': 0.8,
  annoying: 0.7,
  struggling: 0.7,
  worried: 0.7,
  worry: 0.7,
  worries: 0.7,
  worrying: 0.7,
  concerned: 0.7,
  afraid: 0.7,
  scared: 0.7,
  nervous: 0.6,
  // en: wish to fix
  'want to fix': 0.6,
  'want to solve': 0.6,
  'need to fix': 0.6,
  'need to solve': 0.6,
  // en: indifference and negated forms
  "don't care": 0.1,
  'do not care': 0.1,
  whatever: 0.1,
  "doesn't matter": 0.1,
  'not important': 0.1,
  "don't mind": 0.1,
  'no rush': 0.2,
  'not urgent': 0.2,
});

/** Result of {@link emotionScore}. */
export interface EmotionResult {
  /** Highest weight among matched keywords; 0 when none matched. */
  score: number;
  /** Matched keywords (table keys without the `*`), in order of first appearance. */
  tags: string[];
}

interface Hit {
  tag: string;
  weight: number;
  start: number;
  end: number;
}

const CJK = /[\u3400-\u9fff]/u;

/** A negator just before a keyword flips its meaning, e.g. "不是很急", "not really worried". */
const ZH_NEGATED_BEFORE = /(?:不|没|(?<![特区分级个告识类性差派])别|无需|不用|并不|没有)[太很是那么怎用再]{0,3}$/u;
const EN_NEGATED_BEFORE = /(?:\bnot|\bno|\bnever|n't)(?:\s+(?:so|that|very|really|too|at all|even))?\s+$/iu;

interface CompiledKeyword {
  tag: string;
  weight: number;
  pattern: RegExp;
  zh: boolean;
}

const COMPILED: readonly CompiledKeyword[] = Object.entries(EMOTION_KEYWORDS).map(([key, weight]) => {
  const zh = CJK.test(key);
  const stem = key.endsWith('*');
  const body = escapeRegExp(stem ? key.slice(0, -1) : key).replace(/ /gu, '\\s+');
  const source = zh ? body : `(?<![\\p{L}\\p{N}])${body}${stem ? '\\p{L}*' : ''}(?![\\p{L}\\p{N}])`;
  return { tag: stem ? key.slice(0, -1) : key, weight, pattern: new RegExp(source, 'giu'), zh };
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

function findHits(text: string): Hit[] {
  const hits: Hit[] = [];
  for (const kw of COMPILED) {
    for (const m of text.matchAll(kw.pattern)) {
      const start = m.index;
      const before = text.slice(Math.max(0, start - 12), start);
      // A bare keyword after a negator ("不担心" is in the table, "不太担心" is not) means the opposite.
      if (kw.weight >= 0.5 && (kw.zh ? ZH_NEGATED_BEFORE : EN_NEGATED_BEFORE).test(before)) continue;
      hits.push({ tag: kw.tag, weight: kw.weight, start, end: start + m[0].length });
    }
  }
  // Longest match wins where matches overlap, so "不急" suppresses "急" and "很重要" suppresses "重要".
  hits.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const kept: Hit[] = [];
  for (const h of hits) {
    if (!kept.some((k) => h.start < k.end && k.start < h.end)) kept.push(h);
  }
  return kept.sort((a, b) => a.start - b.start);
}

/**
 * Scores the emotional weight of a text with {@link EMOTION_KEYWORDS}.
 *
 * @returns the maximum matched weight (0 when nothing matched) and the matched keywords.
 * @example emotionScore('真的很急') // { score: 1, tags: ['急'] }
 */
export function emotionScore(text: string): EmotionResult {
  const hits = findHits(text);
  const tags: string[] = [];
  let score = 0;
  for (const h of hits) {
    if (!tags.includes(h.tag)) tags.push(h.tag);
    score = Math.max(score, h.weight);
  }
  return { score, tags };
}
