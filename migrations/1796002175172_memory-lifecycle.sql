-- Up Migration
-- Memory lifecycle (issue #5): the daily sweep, the weekly reinforcement, archive/restore/expire.

-- The sweep walks every user's active memories in id order (keyset pagination, one page per
-- transaction). A partial index keeps each page a short range scan however many memories have
-- been archived or expired over the years.
CREATE INDEX memories_active_id_idx ON memories (id) WHERE status = 'active';

-- Archived memories whose lifetime has ended are expired by the sweep (they must not be restorable).
CREATE INDEX memories_archived_expiry_idx ON memories (expires_at) WHERE status = 'archived' AND expires_at IS NOT NULL;

-- The weekly reinforcement walks only high/critical active memories.
CREATE INDEX memories_important_id_idx ON memories (id) WHERE status = 'active' AND importance_level IN ('high', 'critical');

-- "What did the sweep of this morning do?": events by workflow run.
CREATE INDEX memory_events_workflow_idx ON memory_events (workflow_id, run_id) WHERE workflow_id IS NOT NULL;

-- The sweep rewrites decay_score on most active rows every day. decay_score is in no index, so
-- with free space on the page PostgreSQL can update in place (HOT) instead of touching every index.
ALTER TABLE memories SET (fillfactor = 90);

-- Down Migration
ALTER TABLE memories RESET (fillfactor);
DROP INDEX memory_events_workflow_idx;
DROP INDEX memories_important_id_idx;
DROP INDEX memories_archived_expiry_idx;
DROP INDEX memories_active_id_idx;
