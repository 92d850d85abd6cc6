-- Up Migration
-- The graph over exchanges (seed 003 applied to raw conversation lines): each message line linked
-- to the canonical keys of the entities its text names (the memory graph's keys: "my mom", "Mom"
-- and "妈妈" are one key), written by the exchange indexer, read by conversation search's graph
-- sub-route (query entities -> lines naming them, then one hop through the entities named beside
-- them). A link is the message's: deleting the message (erase, retention, purge) deletes it.
CREATE TABLE exchange_entities (
  user_id          text NOT NULL,
  entity_key       text NOT NULL,
  conversation_id  text NOT NULL,
  message_id       text NOT NULL,
  said_at          timestamptz NOT NULL,
  PRIMARY KEY (user_id, entity_key, said_at, conversation_id, message_id),
  FOREIGN KEY (user_id, conversation_id, message_id) REFERENCES messages (user_id, conversation_id, message_id) ON DELETE CASCADE
);
-- The key carries said_at (a message has one) so a key's latest lines are one backward index
-- range, and a key every line names costs no sort of all its lines.
-- The keys of one line (the hop reads the entities named beside a seed) and the cascade's lookup.
CREATE INDEX exchange_entities_line_idx ON exchange_entities (user_id, conversation_id, message_id);

-- Down Migration
DROP TABLE exchange_entities;
