-- Up Migration
-- recall_written_since (migration 1797700000000) in PL/pgSQL. A SQL function with SET clauses is
-- never inlined, and its statement was planned again on every call: a working-set recall paid
-- that planning on every message, on the two cores it shares with Chroma (an empty range: 0.14 ms
-- of execution and a 250-380 us round trip, against 0.04 ms and 120-130 us here). PL/pgSQL keeps
-- the statement's plan for the session; with sequential and bitmap scans off, the generic plan is
-- the same index range of memories_user_written_idx.
CREATE OR REPLACE FUNCTION recall_written_since(p_user text, p_horizon xid8, p_active_only boolean, p_limit integer)
RETURNS SETOF memories LANGUAGE plpgsql STABLE
ROWS 10
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $$
BEGIN
  RETURN QUERY
    SELECT * FROM memories
     WHERE user_id = p_user AND written_xid >= p_horizon AND (NOT p_active_only OR status = 'active')
     LIMIT p_limit;
END
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION recall_written_since(p_user text, p_horizon xid8, p_active_only boolean, p_limit integer)
RETURNS SETOF memories LANGUAGE sql STABLE
ROWS 10
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $$
  SELECT * FROM memories
   WHERE user_id = p_user AND written_xid >= p_horizon AND (NOT p_active_only OR status = 'active')
   LIMIT p_limit
$$;
