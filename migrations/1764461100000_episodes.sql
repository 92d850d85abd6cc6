-- Up Migration

-- Episodes (issue #8): one per conversation and local day, written by ExtractMemories' writeEpisodes
-- activity. The summary is extractive (the sentences that carry named things, places, numbers and
-- the assistant's concrete suggestions); the episode is a routing unit for the shared past: it finds
-- the conversation-day a question is about, and recall then injects that day's raw exchanges.
CREATE TABLE episodes (
  id                   uuid PRIMARY KEY,
  user_id              text NOT NULL REFERENCES users (user_id),
  conversation_id      text NOT NULL,
  -- Local calendar day in time_zone (the user's zone when it was written); display only: the time
  -- route compares instants (started_at/ended_at), so a later zone change cannot misplace it.
  day                  date NOT NULL,
  time_zone            text NOT NULL,
  started_at           timestamptz NOT NULL,
  ended_at             timestamptz NOT NULL,
  summary              text NOT NULL,
  message_ids          text[] NOT NULL,
  -- The messages whose sentences made the summary, best first: what the episode route injects.
  summary_message_ids  text[] NOT NULL,
  doc_length           integer NOT NULL DEFAULT 0,
  -- Hash of (summary, message ids): an unchanged rewrite is a no-op, a changed one re-indexes.
  content_hash         text NOT NULL,
  -- content_hash last written to Chroma; NULL or different means the vector is still owed.
  vector_hash          text,
  workflow_id          text,
  run_id               text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, conversation_id, day),
  FOREIGN KEY (user_id, conversation_id) REFERENCES conversations (user_id, conversation_id)
);
CREATE INDEX episodes_user_time_idx ON episodes (user_id, started_at, ended_at);

-- BM25 postings of episode summaries (same scheme as memory_terms).
CREATE TABLE episode_terms (
  user_id     text NOT NULL,
  term        text NOT NULL,
  episode_id  uuid NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
  tf          integer NOT NULL,
  PRIMARY KEY (user_id, term, episode_id)
);
CREATE INDEX episode_terms_episode_idx ON episode_terms (episode_id);

CREATE TABLE episode_index_stats (
  user_id      text PRIMARY KEY,
  doc_count    integer NOT NULL DEFAULT 0,
  total_length bigint NOT NULL DEFAULT 0
);

-- BM25 over raw messages (L0 conversation search) needs each message's length and per-user
-- collection statistics. message_terms is written by the message API; triggers keep the numbers
-- in step with whatever writes or deletes postings, so no writer has to remember them.
ALTER TABLE messages ADD COLUMN doc_length integer NOT NULL DEFAULT 0;
CREATE TABLE message_index_stats (
  user_id      text PRIMARY KEY,
  doc_count    bigint NOT NULL DEFAULT 0,
  total_length bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION message_terms_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH per_message AS (
         SELECT user_id, conversation_id, message_id, sum(tf)::int AS len FROM new_terms GROUP BY 1, 2, 3
       ),
       updated AS (
         UPDATE messages m SET doc_length = m.doc_length + p.len
           FROM per_message p
          WHERE m.user_id = p.user_id AND m.conversation_id = p.conversation_id AND m.message_id = p.message_id
         RETURNING m.user_id, p.len, (m.doc_length = p.len) AS is_new
       )
  INSERT INTO message_index_stats (user_id, doc_count, total_length)
  SELECT user_id, count(*) FILTER (WHERE is_new), sum(len) FROM updated GROUP BY user_id
  ON CONFLICT (user_id) DO UPDATE
    SET doc_count = message_index_stats.doc_count + EXCLUDED.doc_count,
        total_length = message_index_stats.total_length + EXCLUDED.total_length;
  RETURN NULL;
END
$$;

CREATE FUNCTION message_terms_uncounted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH per_message AS (
         SELECT user_id, conversation_id, message_id, sum(tf)::int AS len FROM old_terms GROUP BY 1, 2, 3
       ),
       updated AS (
         UPDATE messages m SET doc_length = GREATEST(m.doc_length - p.len, 0)
           FROM per_message p
          WHERE m.user_id = p.user_id AND m.conversation_id = p.conversation_id AND m.message_id = p.message_id
         RETURNING m.user_id, p.len, (m.doc_length = 0) AS is_gone
       ),
       -- Postings deleted together with their message (no row left to update) still leave the stats.
       gone AS (
         SELECT p.user_id, p.len, true AS is_gone FROM per_message p
          WHERE NOT EXISTS (SELECT 1 FROM messages m
                             WHERE m.user_id = p.user_id AND m.conversation_id = p.conversation_id AND m.message_id = p.message_id)
       ),
       changes AS (SELECT * FROM updated UNION ALL SELECT * FROM gone)
  UPDATE message_index_stats s
     SET doc_count = GREATEST(s.doc_count - c.docs, 0), total_length = GREATEST(s.total_length - c.len, 0)
    FROM (SELECT user_id, count(*) FILTER (WHERE is_gone) AS docs, sum(len) AS len FROM changes GROUP BY user_id) c
   WHERE s.user_id = c.user_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER message_terms_count AFTER INSERT ON message_terms
  REFERENCING NEW TABLE AS new_terms FOR EACH STATEMENT EXECUTE FUNCTION message_terms_counted();
CREATE TRIGGER message_terms_uncount AFTER DELETE ON message_terms
  REFERENCING OLD TABLE AS old_terms FOR EACH STATEMENT EXECUTE FUNCTION message_terms_uncounted();

-- Backfill what was appended before this migration.
UPDATE messages m SET doc_length = t.len
  FROM (SELECT user_id, conversation_id, message_id, sum(tf)::int AS len FROM message_terms GROUP BY 1, 2, 3) t
 WHERE m.user_id = t.user_id AND m.conversation_id = t.conversation_id AND m.message_id = t.message_id;
INSERT INTO message_index_stats (user_id, doc_count, total_length)
SELECT user_id, count(*), sum(doc_length) FROM messages WHERE doc_length > 0 GROUP BY user_id;

-- Neighbours of a message (the reply after a question) and conversation paging walk seq per conversation.
CREATE INDEX messages_conversation_seq_idx ON messages (user_id, conversation_id, seq);
-- The time route: memories said within a date range.
CREATE INDEX memories_user_created_idx ON memories (user_id, created_at) WHERE status = 'active';
-- Which raw messages are the source of a memory (forgotten or superseded ones are not re-injected).
CREATE INDEX memories_source_messages_idx ON memories USING gin ((source -> 'messageIds'));
-- Forget requests are rare; this keeps "which messages did the user ask to forget" a tiny lookup.
CREATE INDEX memory_events_forget_idx ON memory_events (user_id)
  WHERE action = 'forget' OR (action = 'ignore' AND reason LIKE 'forget request%');

-- Down Migration
DROP INDEX memory_events_forget_idx;
DROP INDEX memories_source_messages_idx;
DROP INDEX memories_user_created_idx;
DROP INDEX messages_conversation_seq_idx;
DROP TRIGGER message_terms_uncount ON message_terms;
DROP TRIGGER message_terms_count ON message_terms;
DROP FUNCTION message_terms_uncounted();
DROP FUNCTION message_terms_counted();
DROP TABLE message_index_stats;
ALTER TABLE messages DROP COLUMN doc_length;
DROP TABLE episode_index_stats;
DROP TABLE episode_terms;
DROP TABLE episodes;
