-- Up Migration
-- The graph over exchanges (1797100000000) links lines as the exchange indexer embeds them, so a
-- conversation indexed before it existed had no links, and its lines took no part in the graph
-- sub-route. entities_linked_seq: every message with seq <= it is linked to its entities. The
-- indexer links the lines between it and exchanges_indexed_seq without embedding them again
-- (src/conversation/exchange-index.ts), then moves both watermarks together.
ALTER TABLE conversations ADD COLUMN entities_linked_seq bigint NOT NULL DEFAULT 0;
CREATE INDEX conversations_entities_owed_idx ON conversations (last_received_at) WHERE entities_linked_seq < exchanges_indexed_seq;

-- Down Migration
DROP INDEX conversations_entities_owed_idx;
ALTER TABLE conversations DROP COLUMN entities_linked_seq;
