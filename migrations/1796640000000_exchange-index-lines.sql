-- Up Migration
-- The exchange index now holds a vector per line (in a per-user collection of its own) besides
-- the vector per (user line, reply) pair. Every conversation is owed again from its first message:
-- the indexer writes the line vectors and rewrites each pair vector under the id it already had
-- (the pair's first message), so nothing is doubled. Lines the user asked to forget are not
-- embedded again. Until a conversation is re-indexed, its pair vectors answer as before.
UPDATE conversations SET exchanges_indexed_seq = 0 WHERE exchanges_indexed_seq > 0;

-- Down Migration
-- The older code reads only the pair collection; the line collections are dropped with each
-- user's purge. Nothing to undo here.
