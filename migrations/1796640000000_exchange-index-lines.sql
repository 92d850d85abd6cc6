-- Up Migration
-- The exchange index now holds a vector per line besides the vector per (user line, reply) pair,
-- and marks each with its unit; search asks for each unit by that mark. Every conversation is owed
-- again from its first message: the indexer writes the line vectors and rewrites each pair vector
-- under the id it already had (the pair's first message), now marked, so no unmarked vector
-- outlives the re-index. Lines the user asked to forget are not embedded again.
UPDATE conversations SET exchanges_indexed_seq = 0 WHERE exchanges_indexed_seq > 0;

-- Down Migration
-- The older code reads pair vectors with or without the mark; nothing to undo.
