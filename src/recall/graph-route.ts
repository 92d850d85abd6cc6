import { candidateKeys, interleaveBySeed, matchQueryEntities, type GraphRecallSource } from '../core/recall/graph';

/** Entities read per request among those the query names (a name held under several kinds is several). */
const ENTITY_MATCHES = 200;
/** Seed groups a query may start from: a long query naming many things walks from the first few. */
const MAX_SEEDS = 6;
/** Two steps: memory → entity → memory → entity → memory ("where did my sister move" → city → that city's memories). */
const HOPS = 2;

/**
 * The graph route (seed 003): the entities the query names (kinship aliases across zh/en), a walk
 * of up to two steps from each, and the memories reached, one entity's evidence after another's so
 * a question joining two things brings both. No entity named: no hits, and no walk.
 */
export async function graphRouteIds(source: GraphRecallSource, input: { userId: string; query: string; now: Date; k: number }): Promise<string[]> {
  if (input.query.length === 0) return [];
  const keys = candidateKeys(input.query);
  if (keys.length === 0) return [];
  const named = await source.entitiesByKey({ userId: input.userId, keys, limit: ENTITY_MATCHES });
  const seeds = new Map([...matchQueryEntities(input.query, named)].slice(0, MAX_SEEDS));
  if (seeds.size === 0) return [];
  const hits = await source.walk({ userId: input.userId, seeds, hops: HOPS, k: input.k, now: input.now });
  return interleaveBySeed(hits, input.k);
}
