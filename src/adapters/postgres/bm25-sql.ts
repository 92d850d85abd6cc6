import { BM25_B, BM25_K1 } from '../../core/recall/bm25';

/**
 * The one SQL form of Okapi BM25 shared by every keyword index (memories, episodes, messages).
 * k1 and b come from src/core/recall/bm25.ts, whose pure scorer is the reference the SQL is
 * tested against (test/bm25-agreement.int.test.ts); a change of either parameter changes every
 * index at once.
 */

/** The tables of one index: postings `(user_id, term, tf, …)` and per-user `(doc_count, total_length)`. */
export interface Bm25Tables {
  postings: 'memory_terms' | 'episode_terms' | 'message_terms';
  stats: 'user_index_stats' | 'episode_index_stats' | 'message_index_stats';
}

/**
 * The CTEs a BM25 query starts with ($1 the user, $2 the query terms): `q` the distinct terms,
 * `stats` the collection size `n` and mean document length `avgdl` (floored at 1 token, as
 * `bm25AvgDocLength` does), `df` each term's document frequency from the postings.
 */
export function bm25Ctes(tables: Bm25Tables): string {
  return `q(term) AS (SELECT DISTINCT unnest($2::text[])),
            stats AS (SELECT doc_count::float8 AS n, GREATEST(total_length::float8 / NULLIF(doc_count, 0), 1) AS avgdl
                        FROM ${tables.stats} WHERE user_id = $1),
            df AS (SELECT t.term, count(*)::float8 AS df FROM ${tables.postings} t JOIN q USING (term) WHERE t.user_id = $1 GROUP BY t.term)`;
}

/**
 * One query term's contribution to a document, `idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`
 * with the non-negative idf `ln(1 + (n − df + 0.5) / (df + 0.5))` — `bm25Score` in SQL. Expects the
 * posting as `t` (its `tf`), the `df` and `stats` CTEs of {@link bm25Ctes}, and the document's
 * length column as `docLength` (e.g. `m.doc_length`). Sum it over the query terms a document has.
 */
export function bm25TermSql(docLength: string): string {
  return `ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5)) * (t.tf * (${BM25_K1} + 1)) / (t.tf + ${BM25_K1} * (1 - ${BM25_B} + ${BM25_B} * ${docLength} / stats.avgdl))`;
}
