import { BM25_B, BM25_K1 } from '../../core/recall/bm25';

/**
 * The one SQL form of Okapi BM25 shared by every keyword index (memories, episodes, messages).
 * k1 and b come from src/core/recall/bm25.ts, whose pure scorer is the reference the SQL is
 * tested against (test/bm25-agreement.int.test.ts); a change of either parameter changes every
 * index at once.
 */

/**
 * The tables of one index: postings `(user_id, term, tf, doc_length, impact, …)` with primary key
 * `(user_id, term, …)` and an impact index `(user_id, term, impact DESC, …ids)` (migration
 * 1796900000000), per-user `(doc_count, total_length)`, and per-user document frequencies
 * `(user_id, term, df)` kept by triggers in the write transaction (migration 1796700000000).
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
 * At most this many postings of one term are read by sorted access, the highest-impact first
 * (impact-ordered postings with early termination, Anh & Moffat, SIGIR 2006). A term in more
 * documents than this is a common one with a small idf; rarer terms are read whole. The work
 * per query is bounded by terms × this number, whatever the size of the user's corpus.
 */
export const BM25_POSTINGS_PER_TERM = 500;

/**
 * The best candidates of the sorted access (this many times k, at least {@link BM25_RESCORED_MIN})
 * get their exact score: each cut term's posting of the candidate is looked up by primary key
 * (the random access of Fagin's threshold algorithm). Without it a document with several common
 * query terms would lose the ones whose posting fell below the cut, and co-occurrence, which is
 * what ranks documents made of common words, would be lost.
 */
export const BM25_RESCORED_PER_K = 5;
export const BM25_RESCORED_MIN = 100;

/** The document id columns of each postings table, in the order of its indexes. */
const POSTING_IDS: Record<Bm25Tables['postings'], readonly string[]> = {
  memory_terms: ['memory_id'],
  message_terms: ['conversation_id', 'message_id'],
  episode_terms: ['episode_id'],
};

/**
 * Each index's function reading one term's best postings in impact order (migration
 * 1797500000000): the impact index range, planned with sorting off. Planned in the statement, on
 * tables no ANALYZE had seen yet every posting of each common term was read and sorted, so the
 * cut saved nothing (test/never-analyzed-plans.int.test.ts: 21,412 postings read for 4 terms).
 */
const TOP_POSTINGS: Record<Bm25Tables['postings'], string> = {
  memory_terms: 'bm25_memory_postings',
  message_terms: 'bm25_message_postings',
  episode_terms: 'bm25_episode_postings',
};

/**
 * The CTEs a BM25 query starts with ($1 the user, $2 the query terms): `stats` the collection
 * size `n` and mean document length `avgdl` (floored at 1 token, as `bm25AvgDocLength` does),
 * `df` the document frequency of each query term the user's index has (a primary-key lookup in
 * the df table, the {@link BM25_MAX_QUERY_TERMS} rarest), and `postings` those terms' postings,
 * each with the document's length (`t.doc_length`), so scoring joins no document table.
 *
 * Why this shape: the plan must not depend on how fresh the table statistics are. A user whose
 * rows arrived after the last ANALYZE is estimated at about one posting, and a planner free to
 * join postings to a per-query aggregate chose a nested loop re-reading all of the user's
 * postings once per posting. Here each term's postings are one range scan of the impact index
 * `(user_id, term, impact DESC, …)`, stopped after {@link BM25_POSTINGS_PER_TERM}, read by a
 * function planned with sorting off ({@link TOP_POSTINGS}), and `df` is MATERIALIZED: the
 * work is one bounded index range per query term whatever the estimates and the corpus size.
 * The cut `postings` is not materialized: its one reader takes the functions' rows as they come
 * (a tuplestore of a few thousand postings cost about a sixth of a chat query's statement, and
 * the functions, opaque to the planner, still run once per term); read whole, a term's postings
 * are a plain subquery the planner could join otherwise, so they stay materialized.
 * `allPostings` reads every posting of each term instead (a search that filters documents after
 * scoring, e.g. by type or date, must not lose the ones it keeps to the cut).
 */
export function bm25Ctes(tables: Bm25Tables, opts: { allPostings?: boolean } = {}): string {
  const termPostings = opts.allPostings
    ? `(SELECT * FROM ${tables.postings} x WHERE x.user_id = $1 AND x.term = df.term OFFSET 0)`
    : `${TOP_POSTINGS[tables.postings]}($1, df.term, ${BM25_POSTINGS_PER_TERM})`;
  return `stats AS (SELECT doc_count::float8 AS n, GREATEST(total_length::float8 / NULLIF(doc_count, 0), 1) AS avgdl
                        FROM ${tables.stats} WHERE user_id = $1),
            df AS MATERIALIZED (
              SELECT d.term, d.df::float8 AS df
                FROM (SELECT DISTINCT unnest($2::text[]) AS term) q
                CROSS JOIN LATERAL (SELECT x.term, x.df FROM ${tables.df} x WHERE x.user_id = $1 AND x.term = q.term AND x.df > 0 OFFSET 0) d
               ORDER BY d.df, d.term
               LIMIT ${BM25_MAX_QUERY_TERMS}),
            postings AS ${opts.allPostings ? 'MATERIALIZED ' : ''}(
              SELECT p.* FROM df CROSS JOIN LATERAL ${termPostings} p)`;
}

/**
 * One query term's contribution to a document, `idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`
 * with the non-negative idf `ln(1 + (n − df + 0.5) / (df + 0.5))` — `bm25Score` in SQL. Expects the
 * posting as `t` (its `tf`), the `df` and `stats` CTEs of {@link bm25Ctes}, and the document's
 * length column as `docLength` (`t.doc_length`, the posting's copy). Sum it over the query terms a document has.
 */
export function bm25TermSql(docLength: string): string {
  // In float8 throughout: an integer column times a decimal literal is numeric in PostgreSQL, whose
  // arithmetic made this sum the costliest step of scoring a few thousand postings.
  return `ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5)) * (t.tf::float8 * ${BM25_K1 + 1}) / (t.tf::float8 + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * ${docLength}::float8 / stats.avgdl))`;
}

/**
 * {@link bm25Ctes} followed by `top`: the best documents with their exact BM25 score — columns:
 * the postings table's id columns, `score`, and with `matched` the query terms each one matched
 * (`matched`, text[]; gathering them for every candidate document was a fifth of a chat query's
 * statement, so only a caller that reads them asks). `k` is the SQL expression of how many the
 * caller keeps (e.g. `$3`); `top` holds the {@link BM25_RESCORED_PER_K}·k best candidates,
 * unordered: the caller orders and limits.
 *
 * `partial` ranks the documents the cut postings name by what was read of them; for the best of
 * them the score is made exact: terms read whole count as read, and each cut term's posting is
 * looked up by primary key (`probed`). A document none of whose postings survived any cut can
 * only be made of common words, each weighing less there than in every document read.
 */
export function bm25TopCtes(tables: Bm25Tables, k: string, opts: { matched?: boolean } = {}): string {
  const ids = POSTING_IDS[tables.postings];
  const of = (alias: string) => ids.map((c) => `${alias}.${c}`).join(', ');
  const term = bm25TermSql('t.doc_length');
  const matched = opts.matched === true;
  return `${bm25Ctes(tables)},
            partial AS MATERIALIZED (
              SELECT ${of('t')},
                     sum(${term}) FILTER (WHERE df.df <= ${BM25_POSTINGS_PER_TERM}) AS whole_score,${matched ? `
                     array_agg(t.term) FILTER (WHERE df.df <= ${BM25_POSTINGS_PER_TERM}) AS whole_terms,` : ''}
                     sum(${term}) AS read_score
                FROM postings t JOIN df USING (term) CROSS JOIN stats
               GROUP BY ${of('t')}
               ORDER BY read_score DESC, ${of('t')}
               LIMIT GREATEST((${k}) * ${BM25_RESCORED_PER_K}, ${BM25_RESCORED_MIN})),
            probed AS (
              SELECT ${of('p')}, sum(${term}) AS cut_score${matched ? ', array_agg(t.term) AS cut_terms' : ''}
                FROM partial p
                CROSS JOIN (SELECT term, df FROM df WHERE df > ${BM25_POSTINGS_PER_TERM}) df
                CROSS JOIN LATERAL (SELECT x.term, x.tf, x.doc_length FROM ${tables.postings} x
                                     WHERE x.user_id = $1 AND x.term = df.term AND ${ids.map((c) => `x.${c} = p.${c}`).join(' AND ')} OFFSET 0) t
                CROSS JOIN stats
               GROUP BY ${of('p')}),
            top AS (
              SELECT ${of('p')}, (COALESCE(p.whole_score, 0) + COALESCE(q.cut_score, 0))::float8 AS score${matched ? `,
                     COALESCE(p.whole_terms, '{}'::text[]) || COALESCE(q.cut_terms, '{}'::text[]) AS matched` : ''}
                FROM partial p LEFT JOIN probed q USING (${ids.join(', ')}))`;
}
