-- Up Migration
-- Reliability (issue #14 items 2, 3, 5): incremental extraction, reconcilers, LLM result reuse.

-- The extraction watermark: every message of the conversation with seq <= extracted_seq has been
-- extracted and its decisions applied. A run reads only messages after it, and moves it forward in
-- the transaction of the last decision of each page (or at the end of the run). Appends to one
-- conversation are serialised (advisory lock in the messages route), so within a conversation seq
-- order is commit order and nothing can commit below a watermark already read.
-- last_seq / last_received_at: the newest message of the conversation and when it arrived, kept by
-- the trigger below so the extraction reconciler finds unextracted, idle conversations by index.
-- reconciled_at: when the reconciler last started an extraction for it (oldest first, no starvation).
ALTER TABLE conversations
  ADD COLUMN extracted_seq    bigint NOT NULL DEFAULT 0,
  ADD COLUMN extracted_at     timestamptz,
  ADD COLUMN last_seq         bigint NOT NULL DEFAULT 0,
  ADD COLUMN last_received_at timestamptz,
  ADD COLUMN reconciled_at    timestamptz;

CREATE FUNCTION conversations_track_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE conversations c
     SET last_seq = GREATEST(c.last_seq, n.max_seq), last_received_at = GREATEST(c.last_received_at, n.max_received)
    FROM (SELECT user_id, conversation_id, max(seq) AS max_seq, max(received_at) AS max_received FROM new_messages GROUP BY 1, 2) n
   WHERE c.user_id = n.user_id AND c.conversation_id = n.conversation_id;
  RETURN NULL;
END
$$;
CREATE TRIGGER messages_track_conversation AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_messages FOR EACH STATEMENT EXECUTE FUNCTION conversations_track_messages();

UPDATE conversations c SET last_seq = m.max_seq, last_received_at = m.max_received
  FROM (SELECT user_id, conversation_id, max(seq) AS max_seq, max(received_at) AS max_received FROM messages GROUP BY 1, 2) m
 WHERE c.user_id = m.user_id AND c.conversation_id = m.conversation_id;
-- Conversations extracted before: what had arrived when the extraction finished is done. Anything
-- received later was never extracted (the bug this fixes); the reconciler now picks it up.
UPDATE conversations c
   SET extracted_seq = COALESCE((SELECT max(m.seq) FROM messages m
                                  WHERE m.user_id = c.user_id AND m.conversation_id = c.conversation_id AND m.received_at <= c.ended_at), 0),
       extracted_at = c.ended_at
 WHERE c.ended_at IS NOT NULL;

CREATE INDEX conversations_unextracted_idx ON conversations (last_received_at) WHERE last_seq > extracted_seq;

-- One page's extractor output, kept until the watermark passes the page: a retried activity (a
-- heartbeat or start-to-close timeout, a lost worker) reuses it instead of paying for the model
-- again, and a re-run over the same messages decides exactly the same candidates. While a call is
-- in flight the row is leased (attempt_id, lease_until, renewed by the heartbeat): a retry waits
-- for a live lease instead of calling the model a second time.
CREATE TABLE extraction_pages (
  user_id          text NOT NULL,
  conversation_id  text NOT NULL,
  from_seq         bigint NOT NULL,
  to_seq           bigint NOT NULL,
  -- Extractor name and the user's timezone: the same messages under another model are another page.
  variant          text NOT NULL,
  attempt_id       text,
  lease_until      timestamptz,
  output           jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, conversation_id, from_seq, to_seq, variant)
);

-- Vector outbox retries: a failed entry waits (exponential backoff) instead of staying at the head
-- of the queue, and after OUTBOX_MAX_ATTEMPTS it is dead-lettered (kept, reported by /healthz,
-- never retried by the drain until an operator or a new write re-enqueues it).
ALTER TABLE vector_outbox
  ADD COLUMN next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN dead_lettered_at timestamptz;

-- Every writer re-enqueues with ON CONFLICT … SET enqueued_at = …: a fresh write starts its
-- retries afresh (due now, not dead), whichever repository wrote it.
CREATE FUNCTION vector_outbox_requeued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.next_attempt_at := NEW.enqueued_at;
  NEW.dead_lettered_at := NULL;
  RETURN NEW;
END
$$;
CREATE TRIGGER vector_outbox_requeue BEFORE UPDATE OF enqueued_at ON vector_outbox
  FOR EACH ROW WHEN (NEW.enqueued_at IS DISTINCT FROM OLD.enqueued_at) EXECUTE FUNCTION vector_outbox_requeued();

CREATE INDEX vector_outbox_due_idx ON vector_outbox (next_attempt_at) WHERE dead_lettered_at IS NULL;
CREATE INDEX vector_outbox_dead_idx ON vector_outbox (dead_lettered_at) WHERE dead_lettered_at IS NOT NULL;

-- Down Migration
DROP INDEX vector_outbox_dead_idx;
DROP INDEX vector_outbox_due_idx;
DROP TRIGGER vector_outbox_requeue ON vector_outbox;
DROP FUNCTION vector_outbox_requeued();
ALTER TABLE vector_outbox DROP COLUMN dead_lettered_at, DROP COLUMN next_attempt_at;
DROP TABLE extraction_pages;
DROP INDEX conversations_unextracted_idx;
DROP TRIGGER messages_track_conversation ON messages;
DROP FUNCTION conversations_track_messages();
ALTER TABLE conversations DROP COLUMN reconciled_at, DROP COLUMN last_received_at, DROP COLUMN last_seq, DROP COLUMN extracted_at, DROP COLUMN extracted_seq;
