import { uuidFromKey } from '../../shared/ids';
import { canonicalEntity } from '../../core/recall/graph';
import type { MemoryGraph } from '../../core/ports/memory';
import type { EntityRef, RelationRef } from '../../core/types';
import type { Queryable } from './pool';

/** Seed 003's per-user graph: entities, relations between them, each linked to its memory. */
export class PostgresMemoryGraph implements MemoryGraph {
  constructor(private readonly db: Queryable) {}

  async link({ userId, memoryId, entities, relations }: { userId: string; memoryId: string; entities: EntityRef[]; relations: RelationRef[] }): Promise<void> {
    const c = this.db;
    const all = new Map<string, EntityRef>();
    for (const e of entities) all.set(`${e.kind}\u0000${e.name}`, e);
    // Relation ends that are not listed entities still become nodes ("user" is the speaker).
    for (const r of relations) {
      if (![...all.values()].some((e) => e.name === r.source)) all.set(`person\u0000${r.source}`, { name: r.source, kind: r.source === 'user' ? 'person' : 'thing' });
      if (![...all.values()].some((e) => e.name === r.target)) all.set(`thing\u0000${r.target}`, { name: r.target, kind: 'thing' });
    }
    if (all.size === 0) return;
    const list = [...all.values()];
    const { rows } = await c.query<{ id: string; name: string }>(
      // The canonical key is what the graph route looks entities up by (entities_user_canonical_key_idx).
      `INSERT INTO entities (id, user_id, name, kind, canonical_key)
       SELECT id, $1, name, kind, key FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) AS x(id, name, kind, key)
       ON CONFLICT (user_id, kind, name) DO UPDATE SET name = EXCLUDED.name, canonical_key = EXCLUDED.canonical_key
       RETURNING id, name`,
      [userId, list.map((e) => uuidFromKey(`entity:${userId}:${e.kind}:${e.name}`)), list.map((e) => e.name), list.map((e) => e.kind), list.map((e) => canonicalEntity(e.name))],
    );
    const idByName = new Map(rows.map((r) => [r.name, r.id]));
    await c.query(
      `INSERT INTO memory_entities (memory_id, entity_id)
       SELECT m.id, e FROM memories m, unnest($2::uuid[]) AS e WHERE m.id = $1 AND m.user_id = $3
       ON CONFLICT DO NOTHING`,
      [memoryId, [...new Set(rows.map((r) => r.id))], userId],
    );
    const rels = relations.filter((r) => idByName.has(r.source) && idByName.has(r.target));
    if (rels.length > 0) {
      await c.query(
        `INSERT INTO relations (user_id, source_id, relation, target_id, memory_id)
         SELECT $1, s, r, t, $2 FROM unnest($3::uuid[], $4::text[], $5::uuid[]) AS x(s, r, t)
         ON CONFLICT DO NOTHING`,
        [userId, memoryId, rels.map((r) => idByName.get(r.source)!), rels.map((r) => r.relation), rels.map((r) => idByName.get(r.target)!)],
      );
    }
  }

  /** Entities of a user with the number of active memories mentioning them (graph recall entry point). */
  async entities({ userId }: { userId: string }): Promise<{ name: string; kind: string; memories: number }[]> {
    const { rows } = await this.db.query(
      `SELECT e.name, e.kind, count(m.id)::int AS memories
         FROM entities e
         LEFT JOIN memory_entities me ON me.entity_id = e.id
         LEFT JOIN memories m ON m.id = me.memory_id AND m.status = 'active' AND m.user_id = $1
        WHERE e.user_id = $1
        GROUP BY e.name, e.kind ORDER BY memories DESC, e.name`,
      [userId],
    );
    return rows;
  }
}
