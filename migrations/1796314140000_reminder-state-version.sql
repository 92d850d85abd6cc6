-- Up Migration
-- Reminder state has one writer and no lost update (issue #14): the reminders row mirrors its
-- ReminderWorkflow's state together with the workflow's change counter. A write carries the
-- version it was made at and only applies over an older one (UPDATE ... WHERE version < $new), so
-- a late, retried or cancelled-but-still-running activity can never put back an older state.
-- Existing rows start at 0: the first versioned write of their workflow applies over them.
ALTER TABLE reminders
  ADD COLUMN version      integer NOT NULL DEFAULT 0,
  ADD COLUMN snooze_count integer NOT NULL DEFAULT 0,
  ADD COLUMN fire_count   integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE reminders DROP COLUMN fire_count, DROP COLUMN snooze_count, DROP COLUMN version;
