/**
 * Named limits on how much text one rule pass reads (issue #20). Every pattern of src/core is
 * linear (test/regex-safety.test.ts), but linear in what it is given: these bounds keep the
 * constant small too, and cap the work of patterns we do not own (the date parser's), whose
 * cost per character we cannot rewrite.
 */

/** Longest sentence the per-sentence rules read; a longer one is split at safe boundaries. */
export const MAX_SENTENCE_CHARS = 1000;

/**
 * Longest message text the rule extractors read (user and assistant turns). The API stores longer
 * messages (MAX_MESSAGE_CHARS of the configuration, 8000 by default); the rules read the head:
 * statements about oneself come early and short, a recommendation leads an answer, and the tail
 * of a pasted document or log is not the user's memory.
 */
export const MAX_MESSAGE_CHARS = 4000;

/** Where a long sentence may be split without cutting a word: after whitespace or punctuation. */
const SAFE_BREAK = /[\s,;:，；：、。．！？!?.…)）\]】」』"”'’]/u;

/** The first `max` UTF-16 units of `text`, never ending inside a surrogate pair. */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** A message's text as the extractors read it: at most {@link MAX_MESSAGE_CHARS}. */
export function boundMessage(text: string): string {
  return cutAt(text, MAX_MESSAGE_CHARS);
}

/**
 * Splits a sentence longer than `max` into pieces of at most `max` units, each ending at the last
 * safe break within the limit (a hard cut, surrogate-safe, when a piece has none). Normal
 * sentences come back unchanged, as the only piece.
 */
export function splitLongSentence(sentence: string, max = MAX_SENTENCE_CHARS): string[] {
  if (sentence.length <= max) return [sentence];
  const pieces: string[] = [];
  let rest = sentence;
  while (rest.length > max) {
    const window = cutAt(rest, max);
    let end = window.length;
    // Look back at most a quarter of the window for a break, so pieces stay long.
    for (let i = window.length - 1; i >= window.length - Math.floor(max / 4); i--) {
      if (SAFE_BREAK.test(window[i] ?? '')) {
        end = i + 1;
        break;
      }
    }
    pieces.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

/**
 * `text` with every whitespace run cut to its first character, and the way back to offsets in
 * `text`. For the date parser (chrono), whose patterns put `\s*` next to `\s*` and backtrack in
 * about n³ on a digit then a long run of spaces; we cannot rewrite them, we can shorten the runs.
 */
export function squeezeSpaces(text: string): { text: string; original: (index: number) => number } {
  const kept: number[] = [];
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (/\s/u.test(c) && i > 0 && /\s/u.test(text[i - 1] ?? '')) continue;
    kept.push(i);
    out += c;
  }
  return { text: out, original: (index) => (index < kept.length ? (kept[index] ?? text.length) : text.length) };
}
