-- Up Migration
-- Per-user API keys (issue #20): a credential bound to one user of one tenant, for the places an
-- end user's device holds the key (an MCP client's config, a chat app's API key field). The secret
-- itself is never stored: `secret_hash` is SHA-256 of a 256-bit random secret, looked up by the
-- key's public id (the token carries both) and compared in constant time. `user_id` is the user
-- key (the keyed pseudonym of tenant and user id), so the purge deletes these rows with the rest.
CREATE TABLE user_api_keys (
  key_id        uuid PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users (user_id) DEFERRABLE INITIALLY IMMEDIATE,
  tenant_id     text NOT NULL,
  secret_hash   bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
  label         text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  last_used_at  timestamptz
);
CREATE INDEX user_api_keys_user_idx ON user_api_keys (user_id, created_at);

-- Down Migration
DROP TABLE user_api_keys;
