/**
 * Okapi BM25 scoring math, free of any index structure: the definition every keyword index
 * follows. k1 and b below are the only copy of the parameters; the PostgreSQL indexes build their
 * SQL from them (src/adapters/postgres/bm25-sql.ts) and an integration test checks on random
 * corpora that the SQL scores equal these functions' (test/bm25-agreement.int.test.ts).
 */

/** Term-frequency saturation: beyond a few occurrences more repetitions add little. */
export const BM25_K1 = 1.2;
/** Length normalisation: 0 ignores document length, 1 normalises fully. */
export const BM25_B = 0.75;

/** Per-term statistics for scoring one term against one document. */
export interface Bm25TermInput {
  /** Occurrences of the term in the document. */
  tf: number;
  /** Number of tokens in the document. */
  docLength: number;
  /** Mean number of tokens per document over the collection (the user's memories). */
  avgDocLength: number;
  /** Number of documents containing the term. */
  docFrequency: number;
  /** Number of documents in the collection. */
  docCount: number;
}

/** Tuning parameters; the defaults are the usual k1 = 1.2, b = 0.75. */
export interface Bm25Params {
  k1?: number;
  b?: number;
}

/**
 * Inverse document frequency, Lucene's non-negative form
 * `ln(1 + (N − n + 0.5) / (n + 0.5))`. The classic Robertson form goes negative for terms in
 * more than half the documents, which would make a matching memory score below a
 * non-matching one; a personal memory store is small, so that case is common.
 */
export function bm25Idf(docFrequency: number, docCount: number): number {
  const n = Math.max(0, docCount);
  const df = Math.min(Math.max(0, docFrequency), n);
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/**
 * BM25 contribution of one query term to one document:
 * `idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`. Returns 0 when the term is absent.
 */
export function bm25Score(input: Bm25TermInput, params: Bm25Params = {}): number {
  const k1 = params.k1 ?? BM25_K1;
  const b = params.b ?? BM25_B;
  const { tf, docLength, avgDocLength, docFrequency, docCount } = input;
  if (!(tf > 0) || !(docCount > 0)) return 0;
  // An empty collection average would divide by zero; treat every document as average length.
  const lengthRatio = avgDocLength > 0 ? Math.max(0, docLength) / avgDocLength : 1;
  const norm = k1 * (1 - b + b * lengthRatio);
  return (bm25Idf(docFrequency, docCount) * (tf * (k1 + 1))) / (tf + norm);
}

/**
 * The mean document length an index scores with: total tokens over documents, floored at one
 * token so a collection of (nearly) empty documents does not divide by a tiny average. The SQL
 * indexes compute the same (`GREATEST(total_length / doc_count, 1)` in bm25-sql.ts).
 */
export function bm25AvgDocLength(totalLength: number, docCount: number): number {
  return docCount > 0 ? Math.max(totalLength / docCount, 1) : 1;
}

/** Collection-level statistics needed to score a whole query against a document. */
export interface Bm25CollectionStats {
  docCount: number;
  avgDocLength: number;
  /** Documents containing each term; missing terms count as 0. */
  docFrequency: ReadonlyMap<string, number>;
}

/**
 * BM25 of a whole query against one document: the sum over distinct query terms (a term
 * repeated in the query is counted once, as SQL full-text engines do).
 */
export function bm25Document(
  queryTerms: Iterable<string>,
  docTermFrequencies: ReadonlyMap<string, number>,
  docLength: number,
  stats: Bm25CollectionStats,
  params: Bm25Params = {},
): number {
  let total = 0;
  for (const term of new Set(queryTerms)) {
    const tf = docTermFrequencies.get(term) ?? 0;
    if (tf === 0) continue;
    total += bm25Score(
      {
        tf,
        docLength,
        avgDocLength: stats.avgDocLength,
        docFrequency: stats.docFrequency.get(term) ?? 0,
        docCount: stats.docCount,
      },
      params,
    );
  }
  return total;
}
