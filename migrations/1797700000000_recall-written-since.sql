-- Up Migration
-- The working set's read of a user's rows written since a horizon (migration 1797600000000),
-- planned in a function with sequential and bitmap scans off: the only plan left is the range of
-- memories_user_written_idx (user, written_xid), whatever the statistics say. Planned in the
-- statement, a generic plan on small tables read every memory of every user
-- (test/bm25-plans.int.test.ts), and another of the user's indexes would read all of the user's
-- rows to keep the few written since.
CREATE FUNCTION recall_written_since(p_user text, p_horizon xid8, p_active_only boolean, p_limit integer)
RETURNS SETOF memories LANGUAGE sql STABLE
-- A recall's delta is a handful of rows. At the default estimate of 1,000 rows the calling
-- statement, a postings probe per row, was costed past jit_above_cost, and one recall in twenty
-- spent 400 ms compiling it (the recall bench's p95).
ROWS 10
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $$
  SELECT * FROM memories
   WHERE user_id = p_user AND written_xid >= p_horizon AND (NOT p_active_only OR status = 'active')
   LIMIT p_limit
$$;

-- Down Migration
DROP FUNCTION recall_written_since(text, xid8, boolean, integer);
