-- Up Migration
-- BM25 read document frequencies with a count(*) over every posting of every query term, joined
-- in a plan the planner chose from table statistics. A user whose postings arrived after the last
-- ANALYZE was estimated at one posting and got a nested loop re-reading all of their postings per
-- posting (seconds instead of a millisecond). Per-user document frequencies kept in the write
-- transaction make df a primary-key lookup, and let the query read each term's postings once.
CREATE TABLE memory_term_df (
  user_id text NOT NULL,
  term    text NOT NULL,
  df      integer NOT NULL,
  PRIMARY KEY (user_id, term)
);
CREATE TABLE message_term_df (LIKE memory_term_df INCLUDING ALL);
CREATE TABLE episode_term_df (LIKE memory_term_df INCLUDING ALL);

-- One pair of statement-level triggers per postings table: every writer (memory writes, lifecycle
-- moves, erase, retention, purge, cascades from deleted documents) keeps df true without knowing
-- about it. Rows are touched in (user, term) order so concurrent writers lock in the same order.
-- TG_ARGV[0] is the df table.
CREATE FUNCTION bm25_df_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(
    'INSERT INTO %1$I AS d (user_id, term, df)
       SELECT user_id, term, count(*) FROM new_terms GROUP BY user_id, term ORDER BY user_id, term
     ON CONFLICT (user_id, term) DO UPDATE SET df = d.df + EXCLUDED.df', TG_ARGV[0]);
  RETURN NULL;
END
$$;

CREATE FUNCTION bm25_df_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(
    'WITH gone AS (SELECT user_id, term, count(*)::int AS n FROM old_terms GROUP BY user_id, term),
          locked AS (SELECT d.user_id, d.term, d.df - g.n AS df FROM %1$I d JOIN gone g USING (user_id, term)
                      ORDER BY d.user_id, d.term FOR UPDATE OF d),
          emptied AS (DELETE FROM %1$I d USING locked l WHERE d.user_id = l.user_id AND d.term = l.term AND l.df <= 0)
     UPDATE %1$I d SET df = l.df FROM locked l WHERE d.user_id = l.user_id AND d.term = l.term AND l.df > 0', TG_ARGV[0]);
  RETURN NULL;
END
$$;

CREATE TRIGGER memory_terms_df_add AFTER INSERT ON memory_terms
  REFERENCING NEW TABLE AS new_terms FOR EACH STATEMENT EXECUTE FUNCTION bm25_df_added('memory_term_df');
CREATE TRIGGER memory_terms_df_remove AFTER DELETE ON memory_terms
  REFERENCING OLD TABLE AS old_terms FOR EACH STATEMENT EXECUTE FUNCTION bm25_df_removed('memory_term_df');
CREATE TRIGGER message_terms_df_add AFTER INSERT ON message_terms
  REFERENCING NEW TABLE AS new_terms FOR EACH STATEMENT EXECUTE FUNCTION bm25_df_added('message_term_df');
CREATE TRIGGER message_terms_df_remove AFTER DELETE ON message_terms
  REFERENCING OLD TABLE AS old_terms FOR EACH STATEMENT EXECUTE FUNCTION bm25_df_removed('message_term_df');
CREATE TRIGGER episode_terms_df_add AFTER INSERT ON episode_terms
  REFERENCING NEW TABLE AS new_terms FOR EACH STATEMENT EXECUTE FUNCTION bm25_df_added('episode_term_df');
CREATE TRIGGER episode_terms_df_remove AFTER DELETE ON episode_terms
  REFERENCING OLD TABLE AS old_terms FOR EACH STATEMENT EXECUTE FUNCTION bm25_df_removed('episode_term_df');

INSERT INTO memory_term_df (user_id, term, df) SELECT user_id, term, count(*) FROM memory_terms GROUP BY user_id, term;
INSERT INTO message_term_df (user_id, term, df) SELECT user_id, term, count(*) FROM message_terms GROUP BY user_id, term;
INSERT INTO episode_term_df (user_id, term, df) SELECT user_id, term, count(*) FROM episode_terms GROUP BY user_id, term;

-- Down Migration
DROP TRIGGER episode_terms_df_remove ON episode_terms;
DROP TRIGGER episode_terms_df_add ON episode_terms;
DROP TRIGGER message_terms_df_remove ON message_terms;
DROP TRIGGER message_terms_df_add ON message_terms;
DROP TRIGGER memory_terms_df_remove ON memory_terms;
DROP TRIGGER memory_terms_df_add ON memory_terms;
DROP FUNCTION bm25_df_removed();
DROP FUNCTION bm25_df_added();
DROP TABLE episode_term_df;
DROP TABLE message_term_df;
DROP TABLE memory_term_df;
