import porter2 from 'wink-porter2-stemmer';

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
  return bare.length <= 2 ? bare : porter2(bare);
}
