/**
 * The {@link Segmenter} port implemented with jieba (@node-rs/jieba, a native addon), and the
 * index tokenizer bound to it. Not workflow-safe: import it from activities, services and adapters
 * only; core code receives the segmenter as a parameter.
 */
import { Jieba } from '@node-rs/jieba';
// The ".js" suffix is needed because the package has no "exports" map: plain Node ESM
// (tsx, node, Temporal workers) does not resolve the extensionless "@node-rs/jieba/dict" subpath.
import { dict } from '@node-rs/jieba/dict.js';
import type { Segmenter } from '../../core/text/segmenter';
import { analyzeForIndex, indexTokens } from '../../core/text/tokenize';

let jieba: Jieba | undefined;

/** Loading the dictionary costs a few hundred ms, so it happens once per process, on first use. */
function instance(): Jieba {
  jieba ??= Jieba.withDict(dict);
  return jieba;
}

/** jieba with its default dictionary and HMM for unknown words; one instance serves the process. */
export const jiebaSegmenter: Segmenter = {
  cutForSearch: (text) => instance().cutForSearch(text, true),
  tag: (text) => instance().tag(text, true),
};

/**
 * Index terms of `text` for the BM25 indexes and queries ({@link analyzeForIndex} with jieba: the
 * words, each English one as its stem). The same function must tokenize documents and queries,
 * otherwise terms never meet.
 */
export function tokenizeForIndex(text: string): string[] {
  return analyzeForIndex(text, jiebaSegmenter);
}

/**
 * The words as written, without English stems: the analysis every index used before stemming. Kept for
 * the benches' plain BM25 baselines, which must stay the baseline they were, not for any index.
 */
export function surfaceTokensForIndex(text: string): string[] {
  return indexTokens(text, jiebaSegmenter);
}
