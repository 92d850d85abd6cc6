-- Up Migration
-- An end call that could not reach Temporal is recorded here, so the extraction reconciler picks
-- the conversation up on its next tick after recovery instead of waiting CONVERSATION_IDLE_SECONDS:
-- the caller was told 202 `pending`, and the messages it ended are extracted as if the call had
-- gone through. The request covers the messages received before it (end_requested_at >=
-- last_received_at); later messages wait for the idle time as usual.
ALTER TABLE conversations ADD COLUMN end_requested_at timestamptz;

-- Down Migration
ALTER TABLE conversations DROP COLUMN end_requested_at;
