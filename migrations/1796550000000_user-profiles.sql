-- Up Migration
-- The persona (read path L3): a short profile of the user rendered from their active durable
-- memories, injected at the top of the stable system part of the recall context. One row per user,
-- rebuilt by the RebuildPersona workflow when their memories change; recall reads it by key.
-- lines: [{text, memoryIds}] in priority order (a smaller budget keeps a prefix of them);
-- memory_ids: every memory the lines state (recall drops a line whose memory is no longer active);
-- memory_version: digest of the template profile it was built from (no rebuild while it holds);
-- builder: 'template' (offline) or 'llm' (a chat model condensed the template).
-- No foreign key to users: a purge deletes the row with the user's other rows (PURGE_TABLES).
CREATE TABLE user_profiles (
  user_id        text PRIMARY KEY,
  text           text NOT NULL,
  lines          jsonb NOT NULL,
  memory_ids     uuid[] NOT NULL,
  memory_version text NOT NULL,
  language       text NOT NULL CHECK (language IN ('zh','en')),
  builder        text NOT NULL CHECK (builder IN ('template','llm')),
  tokens         integer NOT NULL,
  built_at       timestamptz NOT NULL
);

-- Down Migration
DROP TABLE user_profiles;
