/**
 * The process's word segmentation, as the use cases reach it: the core {@link Segmenter} port and
 * the index tokenizer (core's `indexTokens` bound to it), both from the jieba adapter. Use cases
 * import this file, never src/adapters/text/ (a dependency-cruiser rule holds it), so the one place
 * outside the adapters that names the implementation is this binding. Segmentation is CPU work
 * with no outside system and no per-request state: one binding for the process, not a field of
 * ServiceDeps that every caller down to the index tokenizer would have to thread through.
 */
import type { Segmenter } from '../core/text/segmenter';
import { jiebaSegmenter, tokenizeForIndex } from '../adapters/text/jieba';

/** The segmenter of this process (jieba: its dictionary loads once, on first use). */
export const segmenter: Segmenter = jiebaSegmenter;

/** Index terms for the BM25 indexes and queries: the adapters that write postings use this same function. */
export { tokenizeForIndex };
