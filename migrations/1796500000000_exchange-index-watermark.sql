-- Up Migration
-- Dense search over every exchange: each (user line, reply) pair is embedded off the hot path by
-- the exchange indexer (a Schedule), into the user's own Chroma collection of exchanges.
-- exchanges_indexed_seq: every message of the conversation with seq <= it is in the exchange
-- index. It moves only after Chroma accepted the vectors, so an outage delays indexing and loses
-- nothing; 0 for every existing conversation, so the same indexer backfills them.
ALTER TABLE conversations ADD COLUMN exchanges_indexed_seq bigint NOT NULL DEFAULT 0;
-- The indexer's scan: conversations with messages past their exchange watermark.
CREATE INDEX conversations_exchanges_owed_idx ON conversations (last_received_at) WHERE last_seq > exchanges_indexed_seq;

-- Down Migration
DROP INDEX IF EXISTS conversations_exchanges_owed_idx;
ALTER TABLE conversations DROP COLUMN IF EXISTS exchanges_indexed_seq;
