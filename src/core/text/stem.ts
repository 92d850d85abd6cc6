import porter2 from 'wink-porter2-stemmer';
import { boundedMemo } from '../bounded-memo';

/**
 * The English (Porter2) stemmer of the Snowball project, for the BM25 analysis: "painted",
 * "painting" and "paints" all become "paint", "allergies" and "allergy" "allergi".
 *
 * Porter2 rather than Porter's first algorithm because it is what PostgreSQL's `english_stem`
 * dictionary runs: migration 1797200000000 re-posts older postings with that dictionary, and
 * test/bm25-stems.int.test.ts checks the two agree word for word. The algorithm comes from a
 * maintained package (docs/decisions.md, "Dependencies").
 */

const PLAIN_WORD = /^[a-z']+$/u;

/**
 * Porter2 runs its suffix rules as a cascade of regular expressions: about 3 µs a word, some 35
 * words a recall (the query and the chat lines sent with it), 0.11 ms of each recall's CPU in the
 * profile. Chat reuses a small vocabulary, so most words are stemmed once per process.
 */
const stemOf = boundedMemo(20_000, porter2, (word) => word.length <= 32);

/** The Porter2 stem of a lowercased English word ("painting" → "paint"); numbers, identifiers, accented and non-Latin words unchanged. */
export function englishStem(word: string): string {
  if (!PLAIN_WORD.test(word)) return word;
  // Porter2 drops a leading and a trailing apostrophe ("dogs'") and leaves words of two letters or
  // fewer as written; the package keeps some of those apostrophes, where english_stem does not.
  if (word.length <= 2) return word;
  let from = 0;
  let to = word.length;
  while (from < to && word[from] === "'") from++;
  while (to > from && word[to - 1] === "'") to--;
  const bare = word.slice(from, to);
  return bare.length <= 2 ? bare : stemOf(bare);
}
