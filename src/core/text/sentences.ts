/**
 * Text utilities for the offline extractor: width folding, language detection, sentence and
 * clause splitting with offsets, discourse fillers, and the canonical form used for dedup.
 */

import { splitLongSentence } from './bounds';

/** Language the rules are chosen by; mixed Chinese/English text counts as Chinese. */
export type Lang = 'zh' | 'en';

/** A span of the (prepared) message text. */
export interface Span {
  start: number;
  end: number;
  text: string;
}

/** A sentence with its clauses; offsets are into the prepared message. */
export interface Sentence extends Span {
  /** Ended with ? or ？, or a Chinese question particle. */
  question: boolean;
  clauses: Span[];
}

const HAN = /\p{Script=Han}/gu;

const CURLY_APOSTROPHE = /(?<=\p{L})[\u2018\u2019](?=\p{L})/gu;

/**
 * Folds full-width letters and digits ("ＰｙｔｈｏｎＡＰＩ") and the ideographic space to ASCII and
 * curly apostrophes to straight ones, keeping Chinese punctuation (，。：) as the user wrote it.
 * Every replacement is one UTF-16 unit for one, so offsets in the result are offsets in the input.
 */
export function prepareText(text: string): string {
  return text
    .replace(/[\uff10-\uff19\uff21-\uff3a]/giu, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0))
    .replace(/\u3000/gu, ' ')
    .replace(CURLY_APOSTROPHE, "'");
}

/** Two or more Han characters make a text Chinese; a Chinese user's English tech terms stay in. */
export function detectLang(text: string): Lang {
  return (text.match(HAN)?.length ?? 0) >= 2 ? 'zh' : 'en';
}

const EN_ABBREVIATIONS = /\b(?:mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|approx|no|jr|sr)$/iu;

/** Splits a message into sentences (。！？!?；; newlines, and ". " in English), then clauses. */
export function splitSentences(content: string): Sentence[] {
  const sentences: Sentence[] = [];
  let start = 0;
  const push = (end: number, terminator: string): void => {
    // A run-on "sentence" (no terminator for pages) is read in pieces of a bounded length, so
    // the per-sentence rules never see more than MAX_SENTENCE_CHARS at once.
    let at = start;
    const pieces = splitLongSentence(content.slice(start, end));
    pieces.forEach((raw, k) => {
      const lead = raw.length - raw.trimStart().length;
      const text = raw.trim();
      if (text) {
        const s = at + lead;
        const question = (k === pieces.length - 1 && /[?？]/u.test(terminator)) || /吗[~～]*$/u.test(text);
        sentences.push({ start: s, end: s + text.length, text, question, clauses: splitClauses(text, s) });
      }
      at += raw.length;
    });
  };
  for (let i = 0; i < content.length; i += 1) {
    const c = content[i] ?? '';
    let boundary = /[。！？!?；;\n…]/u.test(c);
    if (c === '.') {
      const next = content[i + 1];
      const before = content.slice(Math.max(0, i - 6), i);
      // "1. 先备份" is a list number, not the end of a sentence.
      const listNumber = /^\s*\d{1,2}$/u.test(content.slice(start, i));
      boundary = (next === undefined || /\s/u.test(next)) && !EN_ABBREVIATIONS.test(before) && !listNumber;
    }
    if (!boundary) continue;
    let j = i + 1;
    while (j < content.length && /[。！？!?；;\n….~～"”’)）]/u.test(content[j] ?? '')) j += 1;
    push(i, content.slice(i, j));
    start = j;
    i = j - 1;
  }
  push(content.length, '');
  return sentences;
}

/**
 * Splits a sentence at commas, and in English also before "and/but/so" when a new first-person
 * subject follows ("I'm a nurse and I live in Berlin"). Offsets are absolute.
 */
export function splitClauses(sentence: string, offset: number): Span[] {
  const cuts: number[] = [0];
  const re = /[，,、:：]\s*|(?<!\s)\s+(?=(?:and|but|so)\s+(?:I|I'm|I've|we|we're|my|our)\b)/gu;
  for (const m of sentence.matchAll(re)) {
    // Keep list commas inside numbers ("1,000") and the "、" of enumerations in one clause.
    if (m[0].startsWith('、')) continue;
    if (/^[,:]/u.test(m[0]) && /\d$/u.test(sentence.slice(0, m.index)) && /^\d/u.test(sentence.slice(m.index + 1))) continue;
    cuts.push(m.index, m.index + m[0].length);
  }
  cuts.push(sentence.length);
  const spans: Span[] = [];
  for (let i = 0; i + 1 < cuts.length; i += 2) {
    const a = cuts[i] ?? 0;
    const b = cuts[i + 1] ?? sentence.length;
    const raw = sentence.slice(a, b);
    const text = raw.trim();
    if (!text) continue;
    const s = a + (raw.length - raw.trimStart().length);
    spans.push({ start: offset + s, end: offset + s + text.length, text });
  }
  return spans;
}

const ZH_FILLER =
  /^(?:顺便说一下|顺便说下|顺便提一下|顺便一提|顺便|对了|另外|好消息是?|坏消息是?|告诉你(?:个事|一件事)?|跟你说(?:一下)?|跟你讲|说一下|说实话|老实说|说真的|其实吧|再说一次|再说一遍|重申一下|补充一下|更新一下|话说|请记住|帮我记住|你记住|记住|记一下|帮我记一下|你记一下|记得|嗯嗯|好吧|哈{2,}|[呃嗯哦噢诶哎唉])(?:[，,：:！!～~\s]+|(?=我)|$)|^(?:好的|[好行嗯啊])(?:[，,！!～~\s]+|(?=我)|$)/u;
const EN_FILLER =
  /^(?:and|but|so|lol|haha+|hm{2,}|um+|uh+|by the way|btw|fyi|oh|ok|okay|well|also|anyway|honestly|update|quick update|just so you know|just fyi|for the record|(?:(?:can|could|would|will) you (?:please )?)?(?:remember|note|keep in mind)(?: that)?|(?:please )?note(?: that)?|keep in mind(?: that)?|for context|good news|bad news|hey|hi|hello|once again|again|to repeat|as i said|like i said|ps|so yeah|yeah|yes|sure|alright)(?:[,:!\s-]+|$)/iu;

/** Strips leading discourse fillers ("顺便说一下", "By the way,", "Update:"); returns how much was cut. */
export function stripFiller(text: string, lang: Lang): { text: string; cut: number } {
  let rest = text;
  for (let guard = 0; guard < 4; guard += 1) {
    const m = (lang === 'zh' ? ZH_FILLER : EN_FILLER).exec(rest) ?? (lang === 'zh' ? EN_FILLER.exec(rest) : null);
    if (!m || m[0].length === 0) break;
    rest = rest.slice(m[0].length);
  }
  return { text: rest, cut: text.length - rest.length };
}

/** Trailing punctuation and spaces removed; used for candidate texts. */
export function trimPunct(text: string): string {
  return text.replace(/^[\s，,。.;；:：!！?？、~～]+|(?<![\s，,。.;；:：!！?？、~～])[\s，,。.;；:：!！?？、~～]+$/gu, '');
}

const LEADING_SELF =
  /^(?:我们的|我的|我们|咱们|我|本人|i'm|i am|im|i've|i have|i'd|i'll|i|my|we're|we are|we've|we|our|me)(?![a-z])/u;

/**
 * Canonical form used to detect "the same normalised fact": full-width folded to half-width,
 * lowercased, leading first-person words ("我", "I'm", "My") dropped, punctuation, symbols and
 * whitespace removed. Two statements with equal canonical forms are duplicates.
 */
export function normalizeFact(text: string): string {
  // NFKC folds full-width forms ("ＡＰＩ", "，") to their ASCII counterparts.
  const folded = text.normalize('NFKC').replace(CURLY_APOSTROPHE, "'").toLowerCase().trim();
  const unpunct = folded.replace(/^[\p{P}\p{S}\s]+/u, '');
  const dropped = unpunct.replace(LEADING_SELF, '');
  return dropped.replace(/[\p{P}\p{S}\s]+/gu, '');
}
