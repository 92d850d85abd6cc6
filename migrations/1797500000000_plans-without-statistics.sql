-- Up Migration
-- Recall's ordered reads, planned without statistics. On tables no ANALYZE has seen yet (a new
-- deployment, before autovacuum's first pass) the planner estimates a user at a handful of rows,
-- so reading all of them through (user_id, status, type) and sorting looks as cheap as reading
-- the first k of an index already in order. For a user with 10k memories it is not, in the recall
-- sweep over HTTP (docs/benchmarks.md): the recent route read all 10,000 (14 ms), the time route
-- 10,000 to keep 174 (9 ms), the neighbours' check of hidden lines all 10,000 (8.5 ms), BM25 every
-- posting of a common term (test/never-analyzed-plans.int.test.ts).

-- Why every function here also switches JIT off: a sort the plan cannot avoid (the time route's
-- final one) still carries the cost penalty of a disabled node (10^10 before PostgreSQL 18), far
-- over jit_above_cost, and compiling the statement took 340-750 ms for a read of 0.2 ms. The
-- short lists' function had the same exposure.
ALTER FUNCTION recall_top_by_type(text, text[], real, timestamptz, boolean, integer) SET jit = off;

-- The recent route: the user's active memories, last touched first (memories_user_recent_order_idx
-- has that order, and the planner still sorted). PostgreSQL has no hints; a function's SET holds
-- for its own statements only, so this read is a function planned with sorting switched off, which
-- leaves the ordered index range as the only plan without a disabled node (the same device as
-- recall_top_by_type, migration 1797400000000).
CREATE FUNCTION recall_recent(p_user text, p_types text[], p_k integer)
RETURNS SETOF memories LANGUAGE sql STABLE
SET enable_sort = off
SET jit = off
AS $$
  SELECT * FROM memories
   WHERE user_id = p_user AND status = 'active' AND (p_types IS NULL OR type = ANY(p_types))
   ORDER BY updated_at DESC, importance DESC
   LIMIT p_k
$$;

-- The time route: per date range, the newest k memories said in it. The index had created_at
-- only, so the order (created_at DESC, id) needed a sort, and on rows never analyzed the planner
-- read all of the user's memories through (user_id, status, type) instead, filtering by date; with
-- the whole order in the index it still did (the estimates are a row either way), so the read is
-- a function planned with sorting off, whose only sort left is the final one over at most k rows
-- per range.
CREATE INDEX memories_user_said_order_idx ON memories (user_id, created_at DESC, id) WHERE status = 'active';
DROP INDEX memories_user_created_idx;

CREATE FUNCTION recall_said_in(p_user text, p_starts timestamptz[], p_ends timestamptz[], p_k integer, p_now timestamptz)
RETURNS TABLE (id uuid, created_at timestamptz) LANGUAGE sql STABLE
SET enable_sort = off
SET jit = off
AS $$
  SELECT DISTINCT ON (m.created_at, m.id) m.id, m.created_at
    FROM unnest(p_starts, p_ends) AS r(starts_at, ends_at)
    CROSS JOIN LATERAL (
      SELECT x.id, x.created_at FROM memories x
       WHERE x.user_id = p_user AND x.status = 'active' AND x.created_at >= r.starts_at AND x.created_at < r.ends_at
         AND (x.expires_at IS NULL OR x.expires_at > p_now)
       ORDER BY x.created_at DESC, x.id
       LIMIT p_k) m
   ORDER BY m.created_at DESC, m.id
   LIMIT p_k
$$;

-- One query term's best postings by impact, for each BM25 index (the *_terms_impact_idx ranges):
-- planned in the BM25 statement, every posting of a common term was read and sorted by impact, so
-- the cut of src/adapters/postgres/bm25-sql.ts saved nothing (10k memories: 21,412 postings read
-- for four terms instead of at most 2,400).
CREATE FUNCTION bm25_memory_postings(p_user text, p_term text, p_limit integer)
RETURNS SETOF memory_terms LANGUAGE sql STABLE
SET enable_sort = off
SET jit = off
AS $$
  SELECT * FROM memory_terms WHERE user_id = p_user AND term = p_term ORDER BY impact DESC, memory_id LIMIT p_limit
$$;

CREATE FUNCTION bm25_message_postings(p_user text, p_term text, p_limit integer)
RETURNS SETOF message_terms LANGUAGE sql STABLE
SET enable_sort = off
SET jit = off
AS $$
  SELECT * FROM message_terms WHERE user_id = p_user AND term = p_term ORDER BY impact DESC, conversation_id, message_id LIMIT p_limit
$$;

CREATE FUNCTION bm25_episode_postings(p_user text, p_term text, p_limit integer)
RETURNS SETOF episode_terms LANGUAGE sql STABLE
SET enable_sort = off
SET jit = off
AS $$
  SELECT * FROM episode_terms WHERE user_id = p_user AND term = p_term ORDER BY impact DESC, episode_id LIMIT p_limit
$$;

-- The memories of the conversations whose lines a search shows (which of those lines must stay
-- hidden): a user's memories were read whole and filtered by their source conversation (10k
-- memories: 8.5 ms of a 10.7 ms neighbours statement).
CREATE INDEX memories_user_source_conversation_idx ON memories (user_id, (source ->> 'conversationId'));

-- Down Migration
DROP INDEX memories_user_source_conversation_idx;
CREATE INDEX memories_user_created_idx ON memories (user_id, created_at) WHERE status = 'active';
DROP INDEX memories_user_said_order_idx;
DROP FUNCTION bm25_episode_postings(text, text, integer);
DROP FUNCTION bm25_message_postings(text, text, integer);
DROP FUNCTION bm25_memory_postings(text, text, integer);
DROP FUNCTION recall_said_in(text, timestamptz[], timestamptz[], integer, timestamptz);
DROP FUNCTION recall_recent(text, text[], integer);
ALTER FUNCTION recall_top_by_type(text, text[], real, timestamptz, boolean, integer) RESET jit;
