-- Up Migration
-- A reminder whose workflow start keeps failing for a reason of its own (Temporal refuses its
-- input, its payload cannot be encoded) used to come back first on every reconciler pass: with a
-- batch's worth of such rows, no other reminder was ever started again. Each failure is recorded
-- so the scan takes never-tried rows first and the failing ones after them, oldest failure first,
-- and an operator can see which rows fail and why.
ALTER TABLE reminders
  ADD COLUMN workflow_start_failures integer NOT NULL DEFAULT 0,
  ADD COLUMN workflow_start_failed_at timestamptz,
  ADD COLUMN workflow_start_error text;
DROP INDEX reminders_workflow_unstarted_idx;
CREATE INDEX reminders_workflow_unstarted_idx ON reminders (workflow_start_failed_at NULLS FIRST, created_at, id)
  WHERE workflow_started_at IS NULL AND status IN ('scheduled', 'snoozed');

-- Down Migration
DROP INDEX reminders_workflow_unstarted_idx;
CREATE INDEX reminders_workflow_unstarted_idx ON reminders (created_at)
  WHERE workflow_started_at IS NULL AND status IN ('scheduled', 'snoozed');
ALTER TABLE reminders DROP COLUMN workflow_start_error, DROP COLUMN workflow_start_failed_at, DROP COLUMN workflow_start_failures;
