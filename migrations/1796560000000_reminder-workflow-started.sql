-- Up Migration
-- When a reminder's workflow first ran (its recordReminder step) or was found to exist. The API
-- commits the row before it starts the workflow; a process that dies in between leaves an open row
-- with no workflow, and a client that does not retry never brings it back. The reminder reconciler
-- starts the workflow of open rows still NULL here after a grace period.
ALTER TABLE reminders ADD COLUMN workflow_started_at timestamptz;
-- Rows the workflow has visibly written to (fired, snoozed, closed) had a workflow. Open rows that
-- never fired are left NULL: the reconciler's first ticks check each once (an existing workflow id
-- is rejected as a duplicate and only marks the row), which also repairs rows lost before this.
UPDATE reminders SET workflow_started_at = created_at WHERE status <> 'scheduled' OR fire_count > 0 OR version > 0;
CREATE INDEX reminders_workflow_unstarted_idx ON reminders (created_at)
  WHERE workflow_started_at IS NULL AND status IN ('scheduled', 'snoozed');

-- Down Migration
DROP INDEX reminders_workflow_unstarted_idx;
ALTER TABLE reminders DROP COLUMN workflow_started_at;
