-- Up Migration
-- Scene navigation (read path L2, seed 004): the user's memories grouped into life areas (work,
-- health, family…), and the navigation block recall injects whole in the stable system part after
-- the persona. One row per user, rebuilt by the RebuildPersona workflow in the same run as the
-- persona; recall reads it by key, the drill-down reads one scene's memory ids from it.
-- scenes: [{id, memoryIds, hints}] largest first; lines: the block's lines in that order (a
-- smaller budget keeps a prefix); memory_version: digest of the grouping (no write while it holds).
-- No foreign key to users: a purge deletes the row with the user's other rows (PURGE_TABLES).
CREATE TABLE user_scenes (
  user_id        text PRIMARY KEY,
  language       text NOT NULL CHECK (language IN ('zh','en')),
  scenes         jsonb NOT NULL,
  lines          jsonb NOT NULL,
  memory_version text NOT NULL,
  tokens         integer NOT NULL,
  built_at       timestamptz NOT NULL
);

-- Down Migration
DROP TABLE user_scenes;
