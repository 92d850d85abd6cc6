/**
 * Trailing-word stripping that stays linear on hostile text.
 *
 * `s.replace(/(?:了|吧|的信息|…)+$/u, '')` retries the whole run from every start position and
 * backtracks between overlapping words ("的信息" = "的" + "信息"): quadratic or worse over a long
 * run of particles (issue #20). Here one word is taken off the end at a time, each time searching
 * only the last `window` characters, so the cost is linear in what is removed.
 */

/**
 * Removes words matched by `word` from the end of `text` while one matches.
 * @param word a non-global pattern anchored with `$` (one word, not a run)
 * @param window at least the longest text `word` can match that matters; a longer match is cut
 *   at the window, which only leaves part of an unusually long word behind.
 */
export function stripTrailing(text: string, word: RegExp, window: number): string {
  let s = text;
  for (;;) {
    const tailStart = Math.max(0, s.length - window);
    const m = word.exec(s.slice(tailStart));
    if (!m || m[0].length === 0) return s;
    s = s.slice(0, tailStart + m.index);
  }
}
