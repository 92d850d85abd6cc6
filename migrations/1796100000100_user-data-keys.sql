-- Up Migration
-- Encrypted Temporal payloads (issue #12): one AES-256 data key per user, plus one system key for
-- payloads that belong to nobody (the global sweep). Each key is stored wrapped (AES-256-GCM) by
-- the master key from PAYLOAD_MASTER_KEY; `master_key_id` names which one, so a rotation can
-- re-wrap rows one by one. Purging a user destroys the wrapped key and keeps a tombstone, so every
-- copy of that user's Temporal history (archival, exports, backups of Temporal) stays ciphertext
-- and decoding it fails with "data key destroyed" instead of "unknown key".
CREATE TABLE user_data_keys (
  key_id        uuid PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('user', 'system')),
  -- The user key ("<tenant>:<keyed hash>"); NULL for the system key and once destroyed.
  user_id       text,
  wrapped_key   bytea,
  master_key_id text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  destroyed_at  timestamptz,
  CONSTRAINT user_data_keys_live_or_tombstone CHECK (
    (destroyed_at IS NULL AND wrapped_key IS NOT NULL AND master_key_id IS NOT NULL)
    OR (destroyed_at IS NOT NULL AND wrapped_key IS NULL AND master_key_id IS NULL AND user_id IS NULL)
  ),
  CONSTRAINT user_data_keys_owner CHECK (((kind = 'user') = (user_id IS NOT NULL)) OR destroyed_at IS NOT NULL)
);

-- At most one live key per user and one live system key; concurrent first uses race on these.
CREATE UNIQUE INDEX user_data_keys_live_user_idx ON user_data_keys (user_id) WHERE kind = 'user' AND destroyed_at IS NULL;
CREATE UNIQUE INDEX user_data_keys_live_system_idx ON user_data_keys (kind) WHERE kind = 'system' AND destroyed_at IS NULL;

-- Down Migration
DROP TABLE user_data_keys;
