/**
 * When an exchange found only by vector counts as evidence for an ordinary recall query: its
 * cosine similarity to the query (e5, the query embedding recall already computed) must reach a
 * floor calibrated on a labelled set (test/fixtures/recall-exchange-relevance,
 * `npm run bench -- exchange-relevance`). The floor depends on the query's script because e5's
 * similarities do: on the labelled set, Chinese query–exchange pairs sit about 0.05 higher than
 * English ones whether or not the exchange answers, so one floor either lets Chinese topic
 * neighbours in or keeps English paraphrases out.
 *
 * Pure: no I/O.
 */

/** The two calibrated floors: for queries written mostly in CJK ideographs, and for the rest. */
export interface VectorEvidenceFloors {
  cjk: number;
  other: number;
}

/**
 * True when Han ideographs (or kana, hangul) make up at least a third of the query's letters:
 * "Model Y和Model 3哪个更值得买" is a Chinese question with product names in it.
 */
export function isCjkQuery(query: string): boolean {
  let cjk = 0;
  let letters = 0;
  for (const ch of query) {
    if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(ch)) {
      cjk++;
      letters++;
    } else if (/\p{L}/u.test(ch)) letters++;
  }
  return letters > 0 && cjk * 3 >= letters;
}

/**
 * The similarity a vector-only exchange needs to count as evidence for this query; undefined
 * (no vector route for ordinary queries) when the floor is 1 or more, i.e. switched off.
 */
export function vectorEvidenceFloor(query: string, floors: VectorEvidenceFloors): number | undefined {
  const floor = isCjkQuery(query) ? floors.cjk : floors.other;
  return floor >= 1 ? undefined : floor;
}
