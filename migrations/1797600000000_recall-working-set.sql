-- Up Migration
-- What a recall process needs to keep a user's memories in memory and still read what every
-- other process wrote (src/recall/working-set-cache.ts): which rows changed since it last looked.
--
-- Each memory row carries the id of the transaction that last wrote it. A reader remembers the
-- oldest transaction still running when it read (pg_snapshot_xmin of its snapshot): every
-- transaction below that had finished, so its rows were in what it read, and the next read needs
-- only rows written by that transaction or later. Timestamps or a sequence cannot say this: they
-- are taken before commit, and transactions commit out of order.
ALTER TABLE memories ADD COLUMN written_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE memories ALTER COLUMN written_xid SET DEFAULT pg_current_xact_id();

CREATE FUNCTION memories_stamp_writer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.written_xid := pg_current_xact_id();
  RETURN NEW;
END
$$;
CREATE TRIGGER memories_stamp_writer BEFORE UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION memories_stamp_writer();

CREATE INDEX memories_user_written_idx ON memories (user_id, written_xid);

-- A deleted row leaves nothing to read, so a deletion is marked per user instead: the reader
-- loads that user again. Memories are deleted rarely (erasure, purge), so the mark is one row per
-- user, not one per memory.
CREATE TABLE memory_deletion_marks (
  user_id     text PRIMARY KEY,
  deleted_xid xid8 NOT NULL
);

CREATE FUNCTION memories_mark_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_deletion_marks (user_id, deleted_xid)
  SELECT DISTINCT user_id, pg_current_xact_id() FROM gone
  ON CONFLICT (user_id) DO UPDATE SET deleted_xid = EXCLUDED.deleted_xid;
  RETURN NULL;
END
$$;
CREATE TRIGGER memories_mark_deleted AFTER DELETE ON memories REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION memories_mark_deleted();

-- TRUNCATE fires no row trigger: it moves one counter every reader compares.
CREATE TABLE memory_truncations (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  count     bigint NOT NULL
);
INSERT INTO memory_truncations (singleton, count) VALUES (true, 0);

CREATE FUNCTION memories_count_truncation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE memory_truncations SET count = count + 1;
  RETURN NULL;
END
$$;
CREATE TRIGGER memories_count_truncation AFTER TRUNCATE ON memories
  FOR EACH STATEMENT EXECUTE FUNCTION memories_count_truncation();

-- Down Migration
DROP TRIGGER memories_count_truncation ON memories;
DROP FUNCTION memories_count_truncation();
DROP TABLE memory_truncations;
DROP TRIGGER memories_mark_deleted ON memories;
DROP FUNCTION memories_mark_deleted();
DROP TABLE memory_deletion_marks;
DROP INDEX memories_user_written_idx;
DROP TRIGGER memories_stamp_writer ON memories;
DROP FUNCTION memories_stamp_writer();
ALTER TABLE memories DROP COLUMN written_xid;
