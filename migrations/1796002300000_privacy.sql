-- Up Migration
-- Privacy (issue #12): erasure audit, and the indexes the retention sweep pages through.

-- One row per purge of a user (DELETE /v1/users/{userId}), written by the PurgeUser workflow.
-- It proves that an erasure was requested and finished, and what it removed, without keeping
-- anything about the person: no user id or key (user_ref is a keyed MAC of the user key, so only
-- the service can recompute it to answer "was this user purged?"), no text, counts only.
CREATE TABLE purge_audit (
  id            bigserial PRIMARY KEY,
  tenant_id     text NOT NULL,
  user_ref      text NOT NULL,
  workflow_id   text NOT NULL,
  -- A retried activity of the same run writes the same row.
  run_id        text NOT NULL UNIQUE,
  requested_at  timestamptz NOT NULL,
  completed_at  timestamptz,
  -- Rows deleted per table, collections dropped, schedules and executions deleted.
  counts        jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX purge_audit_ref_idx ON purge_audit (tenant_id, user_ref);

-- Retention: the daily sweep deletes what is older than the configured age across all users, in
-- keyset pages ordered by age. The per-user indexes cannot serve "oldest first over everyone".
CREATE INDEX messages_said_at_idx ON messages (said_at, seq);
CREATE INDEX episodes_ended_at_idx ON episodes (ended_at, id);
CREATE INDEX notifications_created_at_idx ON notifications (created_at, id);
CREATE INDEX digests_date_idx ON digests (digest_date, user_id);
-- A purge deletes the user's pending vector operations; the outbox had no index by user.
CREATE INDEX vector_outbox_user_idx ON vector_outbox (user_id);

-- Down Migration
DROP INDEX vector_outbox_user_idx;
DROP INDEX digests_date_idx;
DROP INDEX notifications_created_at_idx;
DROP INDEX episodes_ended_at_idx;
DROP INDEX messages_said_at_idx;
DROP TABLE purge_audit;
