-- Up Migration
-- BM25 joined every posting to its document (memories, messages, episodes) only to read the
-- document's length, and read every posting of every query term: a common term cost a row per
-- document that has it, so a query's work grew with the corpus (100k memories: p95 172 ms for
-- memory BM25 alone). Each posting now carries what scoring needs — the document's length — and
-- a precomputed impact, the term's BM25 weight under a fixed reference length, which orders the
-- postings of a term best first. A query reads at most a fixed number of postings per term from
-- the impact index (impact-ordered postings with early termination, Anh & Moffat, SIGIR 2006):
-- the work follows the number of query terms, not the number of documents. The exact score is
-- still computed with the user's real average length; only the order in which postings are
-- read uses the reference length (for tf = 1, most postings, the order is the same either way).
-- k1 = 1.2 and b = 0.75 as in src/core/recall/bm25.ts: impact = tf / (tf + k1·(1 − b + b·dl/ref)).
ALTER TABLE memory_terms ADD COLUMN doc_length integer NOT NULL DEFAULT 0;
UPDATE memory_terms t SET doc_length = m.doc_length FROM memories m WHERE m.id = t.memory_id;
ALTER TABLE memory_terms ALTER COLUMN doc_length DROP DEFAULT;
ALTER TABLE memory_terms ADD COLUMN impact real GENERATED ALWAYS AS (tf::real / (tf + 0.3 + 0.9 * doc_length / 16.0)) STORED;
CREATE INDEX memory_terms_impact_idx ON memory_terms (user_id, term, impact DESC, memory_id) INCLUDE (tf, doc_length);

ALTER TABLE message_terms ADD COLUMN doc_length integer NOT NULL DEFAULT 0;
UPDATE message_terms t SET doc_length = m.doc_length
  FROM messages m WHERE m.user_id = t.user_id AND m.conversation_id = t.conversation_id AND m.message_id = t.message_id;
ALTER TABLE message_terms ALTER COLUMN doc_length DROP DEFAULT;
ALTER TABLE message_terms ADD COLUMN impact real GENERATED ALWAYS AS (tf::real / (tf + 0.3 + 0.9 * doc_length / 24.0)) STORED;
CREATE INDEX message_terms_impact_idx ON message_terms (user_id, term, impact DESC, conversation_id, message_id) INCLUDE (tf, doc_length);

ALTER TABLE episode_terms ADD COLUMN doc_length integer NOT NULL DEFAULT 0;
UPDATE episode_terms t SET doc_length = e.doc_length FROM episodes e WHERE e.id = t.episode_id;
ALTER TABLE episode_terms ALTER COLUMN doc_length DROP DEFAULT;
ALTER TABLE episode_terms ADD COLUMN impact real GENERATED ALWAYS AS (tf::real / (tf + 0.3 + 0.9 * doc_length / 200.0)) STORED;
CREATE INDEX episode_terms_impact_idx ON episode_terms (user_id, term, impact DESC, episode_id) INCLUDE (tf, doc_length);

-- Down Migration
DROP INDEX episode_terms_impact_idx;
ALTER TABLE episode_terms DROP COLUMN impact, DROP COLUMN doc_length;
DROP INDEX message_terms_impact_idx;
ALTER TABLE message_terms DROP COLUMN impact, DROP COLUMN doc_length;
DROP INDEX memory_terms_impact_idx;
ALTER TABLE memory_terms DROP COLUMN impact, DROP COLUMN doc_length;
