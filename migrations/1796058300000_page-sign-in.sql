-- Up Migration
-- The memory page's sign-in (issue #12): ids of page tokens that may not be used again — sign-in
-- codes already exchanged for a session (a code leaked through browser history or a log line then
-- cannot be replayed), and sessions signed out before their expiry. Tokens are signed and carry
-- their own expiry, so a row is needed only until then; expired rows are deleted as new ones come.
-- No user id is stored: a row is a random id and an expiry, nothing to purge with a user.
CREATE TABLE page_token_uses (
  token_id    text PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('code', 'session')),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX page_token_uses_expiry_idx ON page_token_uses (expires_at);

-- Down Migration
DROP TABLE page_token_uses;
