-- Up Migration
-- The `recent` route orders a user's active memories by (updated_at DESC, importance DESC). The
-- index had only updated_at, so the order needed a sort; for a user the statistics have never
-- seen (estimated at one row) the planner sorted every active memory of the user instead of
-- reading the index in order (5 ms at 3,000 memories, growing with the user). With both keys in
-- the index the first k entries are the answer, whatever the estimates.
CREATE INDEX memories_user_recent_order_idx ON memories (user_id, updated_at DESC, importance DESC) WHERE status = 'active';
DROP INDEX memories_user_recent_idx;

-- Down Migration
CREATE INDEX memories_user_recent_idx ON memories (user_id, updated_at DESC) WHERE status = 'active';
DROP INDEX memories_user_recent_order_idx;
