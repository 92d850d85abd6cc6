import { BM25_B, BM25_K1 } from '../../core/recall/bm25';

/**
 * The one SQL form of Okapi BM25 shared by every keyword index (memories, episodes, messages).
 * k1 and b come from src/core/recall/bm25.ts, whose pure scorer is the reference the SQL is
 * tested against (test/bm25-agreement.int.test.ts); a change of either parameter changes every
 * index at once.
 */

/**
 * The tables of one index: postings `(user_id, term, tf, …)` with primary key `(user_id, term, …)`,
 * per-user `(doc_count, total_length)`, and per-user document frequencies `(user_id, term, df)`
 * kept by triggers in the write transaction (migration 1796700000000).
 */
export interface Bm25Tables {
  postings: 'memory_terms' | 'episode_terms' | 'message_terms';
  stats: 'user_index_stats' | 'episode_index_stats' | 'message_index_stats';
  df: 'memory_term_df' | 'episode_term_df' | 'message_term_df';
}

/**
 * At most this many query terms are scored: the rarest ones (highest idf), ties by term. A
 * query with more distinct indexed terms drops its most common ones, which contribute least to
 * any score, and the cost stays bounded by the number of terms instead of the corpus.
 */
export const BM25_MAX_QUERY_TERMS = 32;

/**
 * The CTEs a BM25 query starts with ($1 the user, $2 the query terms): `stats` the collection
 * size `n` and mean document length `avgdl` (floored at 1 token, as `bm25AvgDocLength` does),
 * `df` the document frequency of each query term the user's index has (a primary-key lookup in
 * the df table, the {@link BM25_MAX_QUERY_TERMS} rarest), and `postings` those terms' postings.
 *
 * Why this shape: the plan must not depend on how fresh the table statistics are. A user whose
 * rows arrived after the last ANALYZE is estimated at about one posting, and a planner free to
 * join postings to a per-query aggregate chose a nested loop re-reading all of the user's
 * postings once per posting. Here each term's postings are one range scan of the primary key
 * `(user_id, term, …)` inside a LATERAL subquery that `OFFSET 0` keeps from being flattened, and
 * both CTEs are MATERIALIZED: the work is one index range per query term whatever the estimates.
 */
export function bm25Ctes(tables: Bm25Tables): string {
  return `stats AS (SELECT doc_count::float8 AS n, GREATEST(total_length::float8 / NULLIF(doc_count, 0), 1) AS avgdl
                        FROM ${tables.stats} WHERE user_id = $1),
            df AS MATERIALIZED (
              SELECT d.term, d.df::float8 AS df
                FROM (SELECT DISTINCT unnest($2::text[]) AS term) q
                CROSS JOIN LATERAL (SELECT x.term, x.df FROM ${tables.df} x WHERE x.user_id = $1 AND x.term = q.term AND x.df > 0 OFFSET 0) d
               ORDER BY d.df, d.term
               LIMIT ${BM25_MAX_QUERY_TERMS}),
            postings AS MATERIALIZED (
              SELECT p.* FROM df CROSS JOIN LATERAL (SELECT * FROM ${tables.postings} x WHERE x.user_id = $1 AND x.term = df.term OFFSET 0) p)`;
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
