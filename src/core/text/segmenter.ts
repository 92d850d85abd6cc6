/**
 * Word segmentation as a port. Chinese has no spaces, so finding words needs a dictionary
 * segmenter (jieba, a native module); core code that needs words receives a {@link Segmenter}
 * instead of loading one, which keeps core free of native modules and lets a test pass its own.
 * The jieba implementation is src/adapters/text/jieba.ts; use cases reach it through
 * src/shared/segmentation.ts, never the adapter (a dependency-cruiser rule).
 */

/** A word as the segmenter tags it (jieba's part-of-speech tags: n noun, v verb, eng Latin, x unknown, …). */
export interface TaggedWord {
  word: string;
  tag: string;
}

export interface Segmenter {
  /**
   * Search-mode segmentation: the words of `text` plus the dictionary sub-words of long ones
   * ("中华人民共和国" also yields "人民"), with unknown words found by HMM.
   */
  cutForSearch(text: string): string[];
  /** The words of `text` with their part-of-speech tags, unknown words found by HMM. */
  tag(text: string): TaggedWord[];
}
