import type { GraphHit, GraphRecallSource } from '../../core/recall/graph';
import type { Queryable } from './pool';
import { bind, prepared } from './prepared';

/**
 * An entity mentioned by more active memories than this is a hub ("coffee" for a barista): walking
 * through it would reach most of the user's memories, so a walk stops there instead of passing on.
 */
const HUB_MEMORIES = 40;

/** The seed lookup (see {@link PostgresGraphRecall.entitiesByKey}), a named statement (prepared.ts). */
const SEEDS = prepared(
  `SELECT e.id, e.name, e.canonical_key AS key
         FROM unnest($2::text[]) AS k(key)
         CROSS JOIN LATERAL (
           SELECT x.id, x.name, x.canonical_key FROM entities x
            WHERE x.user_id = $1 AND x.canonical_key = k.key
            LIMIT $3
         ) e
         LEFT JOIN LATERAL (
           SELECT 1 AS live FROM memory_entities me JOIN memories m ON m.id = me.memory_id
            WHERE me.entity_id = e.id AND m.user_id = $1 AND m.status = 'active'
            LIMIT 1
         ) a ON true
        ORDER BY a.live IS NOT NULL DESC, e.name
        LIMIT $3`,
);

/** The graph read by recall: seed 003's entities, relations and memory links, walked in PostgreSQL. */
export class PostgresGraphRecall implements GraphRecallSource {
  constructor(private readonly db: Queryable) {}

  /**
   * One statement, one index descent per candidate key on `entities_user_canonical_key_idx`: the
   * cost follows the query, not the user's number of entities, and an entity created last is
   * found as well as the first. Not `canonical_key = ANY($2)`: on a table without statistics the
   * planner judges `user_id = $1` alone the more selective condition, takes the index for it and
   * filters the keys, reading every entity of the user; the lateral equality on both columns of
   * the index leaves it no cheaper plan. The "on an active memory" preference is a lateral with
   * LIMIT 1 for the same reason: as an EXISTS the planner hashes the user's whole memory_entities.
   */
  async entitiesByKey({ userId, keys, limit }: { userId: string; keys: readonly string[]; limit: number }): Promise<{ id: string; name: string; key: string }[]> {
    if (keys.length === 0) return [];
    const { rows } = await this.db.query<{ id: string; name: string; key: string }>(
      bind(SEEDS, [userId, [...new Set(keys)], limit]),
    );
    return rows;
  }

  /**
   * One recursive CTE: from the seed entities, each step goes to the entities related to the
   * current one (either direction) or named by the same active memory; hubs end a path. The
   * memories naming any reached entity are returned with the fewest steps from each seed group,
   * at most `k` per group (a group with many memories does not crowd out another).
   */
  async walk({ userId, seeds, hops, k, now }: { userId: string; seeds: Map<string, string[]>; hops: number; k: number; now: Date }): Promise<GraphHit[]> {
    const groups = [...seeds.entries()].flatMap(([seed, ids]) => ids.map((id) => ({ seed, id })));
    if (groups.length === 0) return [];
    const { rows } = await this.db.query<{ memory_id: string; seed: string; hop: number }>(
      `WITH RECURSIVE live AS (
          SELECT me.memory_id, me.entity_id
            FROM memory_entities me JOIN memories m ON m.id = me.memory_id
           WHERE m.user_id = $1 AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > $5)
        ),
        hubs AS (
          SELECT entity_id FROM live GROUP BY entity_id HAVING count(*) > ${HUB_MEMORIES}
        ),
        walk(entity_id, seed, hop) AS (
          SELECT e.id, s.seed, 0
            FROM unnest($2::uuid[], $3::text[]) AS s(id, seed) JOIN entities e ON e.id = s.id AND e.user_id = $1
          UNION
          SELECT nxt.entity_id, w.seed, w.hop + 1
            FROM walk w
            CROSS JOIN LATERAL (
              SELECT r.target_id AS entity_id FROM relations r WHERE r.user_id = $1 AND r.source_id = w.entity_id
              UNION
              SELECT r.source_id FROM relations r WHERE r.user_id = $1 AND r.target_id = w.entity_id
              UNION
              SELECT l2.entity_id FROM live l1 JOIN live l2 ON l2.memory_id = l1.memory_id WHERE l1.entity_id = w.entity_id
            ) nxt
            JOIN entities e ON e.id = nxt.entity_id AND e.user_id = $1
           WHERE w.hop < $4 AND e.name <> 'user' AND w.entity_id NOT IN (SELECT entity_id FROM hubs)
        ),
        reached AS (
          SELECT entity_id, seed, min(hop) AS hop FROM walk GROUP BY entity_id, seed
        ),
        per_seed AS (
          SELECT l.memory_id, r.seed, min(r.hop)::int AS hop, count(*) AS paths
            FROM reached r JOIN live l ON l.entity_id = r.entity_id
           GROUP BY l.memory_id, r.seed
        ),
        ranked AS (
          SELECT memory_id, seed, hop, row_number() OVER (PARTITION BY seed ORDER BY hop, paths DESC, memory_id) AS rank FROM per_seed
        )
        SELECT memory_id, seed, hop FROM ranked WHERE rank <= $6 ORDER BY seed, rank`,
      [userId, groups.map((g) => g.id), groups.map((g) => g.seed), hops, now, k],
    );
    return rows.map((r) => ({ memoryId: r.memory_id, seed: r.seed, hop: r.hop }));
  }
}
