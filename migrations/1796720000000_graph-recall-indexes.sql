-- Up Migration
-- The graph route (src/adapters/postgres/graph-recall-repository.ts) walks from an entity to the
-- memories naming it and from a relation's target back to its source; the primary keys only serve
-- the other direction (memory → entities, user + source → targets), so without these each step of a
-- walk would scan the whole table.
CREATE INDEX memory_entities_entity_idx ON memory_entities (entity_id, memory_id);
CREATE INDEX relations_user_target_idx ON relations (user_id, target_id);

-- Down Migration
DROP INDEX relations_user_target_idx;
DROP INDEX memory_entities_entity_idx;
