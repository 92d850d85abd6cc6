-- Up Migration
-- Recall's important and type lists: a user's best live memories of some types, by importance.
-- Planned on the user's own rows, the statement depended on statistics: for a user whose rows were
-- never analyzed (estimated at one row) the planner read every live memory through
-- (user_id, status, type) and sorted them (10k memories: 5-13 ms per list, docs/benchmarks.md).
-- Here each type is read on its own from an index in that order, at most k entries per type:
-- the function plans with sorting switched off, so the only plan left is the ordered index range,
-- whatever the statistics say (a SET on a function holds for its own statements only).
CREATE INDEX memories_user_live_order_idx ON memories (user_id, type, importance DESC, updated_at DESC) WHERE status = 'active';

CREATE FUNCTION recall_top_by_type(p_user text, p_types text[], p_min_importance real, p_now timestamptz, p_settled_only boolean, p_k integer)
RETURNS SETOF memories LANGUAGE sql STABLE
SET enable_sort = off
AS $$
  SELECT m.* FROM unnest(p_types) AS t(type)
  CROSS JOIN LATERAL (
    SELECT * FROM memories
     WHERE user_id = p_user AND status = 'active' AND type = t.type AND importance >= p_min_importance
       AND (expires_at IS NULL OR expires_at > p_now) AND NOT (p_settled_only AND pending)
     ORDER BY importance DESC, updated_at DESC
     LIMIT p_k) m
$$;

-- Down Migration
DROP FUNCTION recall_top_by_type(text, text[], real, timestamptz, boolean, integer);
DROP INDEX memories_user_live_order_idx;
