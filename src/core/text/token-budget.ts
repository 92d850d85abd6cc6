/**
 * Token budget for injected context (M.5 §4: "不超 token 预算"). Counts real cl100k_base
 * tokens rather than estimating from length: Chinese, English and emoji have very different
 * tokens-per-character ratios, and an estimate can overshoot the budget.
 *
 * Every decision is verified against the exact count of the whole composed output, because
 * BPE token counts are not additive across concatenation and not strictly monotonic in
 * prefix length.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import { boundedMemo, isShortText } from '../bounded-memo';

/** Appended to truncated text. */
export const TRUNCATION_MARK = '…(已截断)';

/** A truncated body shorter than this many tokens is not worth injecting; the item is skipped. */
export const MIN_USEFUL_TOKENS = 8;

let encoder: Tiktoken | undefined;
let pretokenizer: RegExp | undefined;

/** Building the BPE ranks costs ~0.5 s, so it happens once, on first use. */
function getEncoder(): Tiktoken {
  encoder ??= new Tiktoken(cl100kBase);
  return encoder;
}

/**
 * Token count per pre-tokenised piece. tiktoken splits text with the encoding's regex and
 * byte-pair-encodes each piece independently, so a text's count is exactly the sum over its
 * pieces. js-tiktoken's BPE is quadratic in piece length and slow (~4 ms for 500 CJK
 * characters), while budget selection re-measures mostly the same lines many times; caching
 * pieces makes re-measuring nearly free without changing any count. The bound keeps a long-lived
 * worker's memory in check.
 */
const PIECE_CACHE_LIMIT = 50_000;
const pieceTokens = boundedMemo(PIECE_CACHE_LIMIT, (piece) => getEncoder().encode(piece, [], []).length);

/**
 * Whole short texts counted once: the same memory lines come back in the recalls of a
 * conversation, and splitting a line into pieces with the pre-tokeniser's regex was most of what
 * counting it cost once its pieces were known.
 */
const textTokens = boundedMemo(
  PIECE_CACHE_LIMIT,
  (text) => {
    // Same flags js-tiktoken uses for its pre-tokeniser.
    pretokenizer ??= new RegExp(cl100kBase.pat_str, 'gu');
    let total = 0;
    for (const match of text.matchAll(pretokenizer)) total += pieceTokens(match[0]);
    return total;
  },
  isShortText,
);

/**
 * Number of cl100k_base tokens in `text` (identical to `encode(text).length`). Special-token
 * strings such as "<|endoftext|>" in stored text are counted as ordinary text instead of
 * throwing.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : textTokens(text);
}

/** Tokens of `line + "\n"`, per line: what {@link countLinesTokens} adds up instead of re-reading a whole block. */
const lineTokens = boundedMemo(PIECE_CACHE_LIMIT, (line) => countTokens(`${line}\n`));

/**
 * Exactly `countTokens(lines.join('\n'))`, without re-reading the block: the budget cut measures
 * the same block again for every candidate line, which made counting most of a recall's own CPU.
 * The pre-tokeniser has no look-behind and no piece runs past a newline into a line that starts
 * with a visible character, so such a line is counted on its own and the line before it together
 * with its "\n"; before a line that starts with white space (which a piece of white space and
 * line breaks may swallow) the rest is counted joined (test/core/text/token-budget.test.ts checks
 * the identity on random blocks).
 */
export function countLinesTokens(lines: readonly string[]): number {
  let total = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1];
    if (next === undefined) return total + countTokens(line);
    if (next.length === 0 || /^\s/u.test(next)) return total + countTokens(lines.slice(i).join('\n'));
    total += lineTokens(line);
  }
  return total;
}

let segmenter: Intl.Segmenter | undefined;

/** User-perceived characters, so cuts never split a surrogate pair, a ZWJ emoji or a flag. */
export function graphemes(text: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/**
 * Largest k in [0, n) for which `fits(k)` holds, found by binary search; every returned k has
 * been verified, so the answer is safe even where fits is not perfectly monotonic. −1 if none.
 */
function largestFitting(n: number, fits: (k: number) => boolean): number {
  let lo = 0;
  let hi = n - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (fits(mid)) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

function cut(chars: readonly string[], k: number, mark: string): string {
  return chars.slice(0, k).join('').trimEnd() + mark;
}

/**
 * Returns `text` unchanged if it fits in `maxTokens`, otherwise the longest grapheme prefix
 * that still fits together with `mark` appended. Returns '' when not even the mark fits.
 */
export function truncateToTokens(text: string, maxTokens: number, mark: string = TRUNCATION_MARK): string {
  if (countTokens(text) <= maxTokens) return text;
  const chars = graphemes(text);
  const k = largestFitting(chars.length, (i) => countTokens(cut(chars, i, mark)) <= maxTokens);
  return k < 0 ? '' : cut(chars, k, mark);
}

/**
 * How an item renders as one line. With parts, only `body` is truncated, so labels and dates
 * survive truncation.
 */
export type RenderedLine = string | { prefix?: string; body: string; suffix?: string };

/** One selected item and its (possibly truncated) line. */
export interface Chosen<T> {
  item: T;
  line: string;
  truncated: boolean;
}

/** Options for {@link selectWithinBudget}. */
export interface SelectOptions<T> {
  /**
   * Exact token cost of the complete output for a selection, headers included. Default: the
   * lines joined by "\n". Must return 0 for an empty selection if empty output is wanted.
   */
  measure?: (chosen: readonly Chosen<T>[]) => number;
  /** Minimum tokens of truncated body worth keeping (default {@link MIN_USEFUL_TOKENS}). */
  minUsefulTokens?: number;
  /** Truncation mark (default {@link TRUNCATION_MARK}). */
  mark?: string;
}

/** Result of {@link selectWithinBudget}. */
export interface Selection<T> {
  chosen: Chosen<T>[];
  /** measure(chosen): the exact cost of the complete output, always ≤ budget. */
  tokens: number;
}

function partsOf(rendered: RenderedLine): { prefix: string; body: string; suffix: string } {
  return typeof rendered === 'string'
    ? { prefix: '', body: rendered, suffix: '' }
    : { prefix: rendered.prefix ?? '', body: rendered.body, suffix: rendered.suffix ?? '' };
}

/**
 * Greedy selection in the given (rank) order. An item that does not fit whole is truncated
 * when at least `minUsefulTokens` of its body fit; otherwise it is skipped and smaller later
 * items still get their chance. The complete output as measured by `measure` never exceeds
 * `budget`.
 */
export function selectWithinBudget<T>(
  items: readonly T[],
  budget: number,
  render: (item: T) => RenderedLine,
  options: SelectOptions<T> = {},
): Selection<T> {
  const measure = options.measure ?? ((chosen) => countLinesTokens(chosen.map((c) => c.line)));
  const minUseful = options.minUsefulTokens ?? MIN_USEFUL_TOKENS;
  const mark = options.mark ?? TRUNCATION_MARK;
  const chosen: Chosen<T>[] = [];
  let used = measure(chosen);
  if (used > budget) return { chosen: [], tokens: used };

  for (const item of items) {
    const { prefix, body, suffix } = partsOf(render(item));
    const whole: Chosen<T> = { item, line: prefix + body + suffix, truncated: false };
    const remaining = budget - used;
    // Cheap rejection before the exact measure: a line's own tokens can only shrink by a
    // token or two when merged at a boundary, so anything far above the remainder cannot fit.
    const ownTokens = countTokens(whole.line);
    if (ownTokens <= remaining + 2) {
      const total = measure([...chosen, whole]);
      if (total <= budget) {
        chosen.push(whole);
        used = total;
        continue;
      }
    }
    // Not enough room even for the frame plus a useful piece of body: skip without searching.
    const frameTokens = countTokens(prefix + mark + suffix);
    if (frameTokens + minUseful > remaining + 2) continue;
    const chars = graphemes(body);
    const candidate = (k: number): Chosen<T> => ({ item, line: prefix + cut(chars, k, mark) + suffix, truncated: true });
    const k = largestFitting(chars.length, (i) => measure([...chosen, candidate(i)]) <= budget);
    if (k < 0) continue;
    const kept = chars.slice(0, k).join('').trimEnd();
    if (countTokens(kept) < minUseful) continue;
    const truncated = candidate(k);
    chosen.push(truncated);
    used = measure(chosen);
  }
  return { chosen, tokens: used };
}
