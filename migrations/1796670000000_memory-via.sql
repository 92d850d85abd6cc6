-- Up Migration
-- How each memory arrived (src/core/memory/via.ts: MEMORY_VIAS; test/memory-via.int.test.ts checks
-- this CHECK against it), and whether it waits for the user's confirmation. Before this column the
-- answer was in JSON: source.via ('api' for POST …/memories and for MCP writes) and metadata.via
-- ('mcp' for memory_add). Directly written instructions already stored become pending like new
-- ones: nothing says the user ever gave them, and the user confirms them on the memory page.
ALTER TABLE memories
  ADD COLUMN via text NOT NULL DEFAULT 'extraction' CHECK (via IN ('extraction','api','mcp')),
  ADD COLUMN pending boolean NOT NULL DEFAULT false;
UPDATE memories SET via = CASE WHEN metadata ->> 'via' = 'mcp' THEN 'mcp' WHEN source ->> 'via' = 'api' THEN 'api' ELSE 'extraction' END
 WHERE metadata ->> 'via' = 'mcp' OR source ->> 'via' = 'api';
UPDATE memories SET pending = true WHERE via <> 'extraction' AND type = 'instruction' AND status = 'active';
-- The memory page lists what waits for the user.
CREATE INDEX memories_user_pending_idx ON memories (user_id) WHERE pending;

-- The decision rows say how the candidate they decided arrived. Rows that are not about a written
-- candidate (forget, restore, sweeps) leave it null.
ALTER TABLE memory_events ADD COLUMN via text CHECK (via IN ('extraction','api','mcp'));
UPDATE memory_events SET via = 'extraction' WHERE conversation_id IS NOT NULL AND action IN ('create','reinforce','update','supersede','ignore','resolve');
UPDATE memory_events e SET via = m.via
  FROM memories m
 WHERE e.via IS NULL AND e.conversation_id IS NULL AND e.actor = 'api' AND e.memory_id = m.id AND e.user_id = m.user_id
   AND e.action IN ('create','reinforce','update','supersede') AND m.via <> 'extraction';

-- Down Migration
ALTER TABLE memory_events DROP COLUMN via;
DROP INDEX memories_user_pending_idx;
ALTER TABLE memories DROP COLUMN pending, DROP COLUMN via;
