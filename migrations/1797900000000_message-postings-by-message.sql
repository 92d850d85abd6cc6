-- Up Migration
-- Deleting a message's postings (retention, erasure) had no index to find them: the primary key
-- leads with (user_id, term), where the message is not a bound column, so each message walked its
-- user's whole range of postings, or the page scanned the table. A retention page of 200 messages
-- from a user with 300,000 postings visited 1.2 million pages (test/never-analyzed-plans.int.test.ts).
-- Memories and episodes have an index by document already; their deletes name the document alone.
-- Built under a SHARE lock, so message writes wait while it builds. A deployment with many postings
-- can build it beforehand without blocking writes, then run this migration, which finds it:
--   CREATE INDEX CONCURRENTLY message_terms_message_idx ON message_terms (user_id, conversation_id, message_id);
CREATE INDEX IF NOT EXISTS message_terms_message_idx ON message_terms (user_id, conversation_id, message_id);

-- Down Migration
DROP INDEX message_terms_message_idx;
