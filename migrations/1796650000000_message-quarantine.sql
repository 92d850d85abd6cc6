-- Up Migration
-- Messages whose rule work keeps failing or runs out of its time (issue #20): kept, never deleted
-- (the message itself stays in messages), with why, how often and when. A row with quarantined_at
-- set is skipped by every later extraction of its conversation; a row without it counts failed
-- attempts until the policy quarantines the message (docs/write-path.md#quarantine).
CREATE TABLE message_quarantine (
  user_id          text NOT NULL,
  conversation_id  text NOT NULL,
  message_id       text NOT NULL,
  seq              bigint NOT NULL,
  reason           text NOT NULL CHECK (reason IN ('timeout', 'error')),
  detail           text NOT NULL,
  attempts         integer NOT NULL DEFAULT 1,
  first_failed_at  timestamptz NOT NULL DEFAULT now(),
  last_failed_at   timestamptz NOT NULL DEFAULT now(),
  quarantined_at   timestamptz,
  -- No foreign key to messages: the tenant re-key moves user_id table by table in any order;
  -- a purge deletes these rows with the user's others (PURGE_TABLES). No message text is kept here.
  PRIMARY KEY (user_id, conversation_id, message_id)
);
CREATE INDEX message_quarantine_held_idx ON message_quarantine (quarantined_at) WHERE quarantined_at IS NOT NULL;

-- Down Migration
DROP TABLE message_quarantine;
