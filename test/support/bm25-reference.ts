import { tokenizeForIndex } from '../../src/adapters/text/jieba';
import { bm25AvgDocLength, bm25Document } from '../../src/core/recall/bm25';
import { termFrequencies } from '../../src/core/text/tokenize';

/**
 * The reference BM25 of every document that has a query term, computed by the pure scorer over
 * the whole corpus from the same tokens the SQL indexes store: what the SQL searches are held to.
 */
export function referenceBm25Scores(corpus: readonly { id: string; text: string }[], query: string): Map<string, number> {
  const docs = corpus.map((d) => {
    const tokens = tokenizeForIndex(d.text);
    return { id: d.id, tf: termFrequencies(tokens), length: tokens.length };
  });
  const docFrequency = new Map<string, number>();
  for (const d of docs) for (const term of d.tf.keys()) docFrequency.set(term, (docFrequency.get(term) ?? 0) + 1);
  const stats = { docCount: docs.length, avgDocLength: bm25AvgDocLength(docs.reduce((s, d) => s + d.length, 0), docs.length), docFrequency };
  const queryTerms = tokenizeForIndex(query);
  const out = new Map<string, number>();
  for (const d of docs) {
    const score = bm25Document(queryTerms, d.tf, d.length, stats);
    if (score > 0) out.set(d.id, score);
  }
  return out;
}
