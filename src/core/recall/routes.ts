/**
 * The one list of recall routes. Pure, so the API schema, the MCP tools and the recall use case
 * all take it from here (test/memory-type-list.test.ts holds the client package's copy equal).
 */
export const RecallRoute = {
  ann: 'ann',
  bm25: 'bm25',
  recent: 'recent',
  important: 'important',
  type: 'type',
  /** Memories said on the dates the query names ("我6月2号…", "last Tuesday"), ranked first. */
  time: 'time',
  /** Past exchanges (raw user + assistant lines), searched on every recall, competing with memories for the budget. */
  exchanges: 'exchanges',
  /** Memories reached through the entity graph from the entities the query names (seed 003). */
  graph: 'graph',
} as const;
export type RecallRoute = (typeof RecallRoute)[keyof typeof RecallRoute];
/** Every route, derived from {@link RecallRoute} (the one list of them: schemas, MCP and tests take it from here). */
export const ALL_ROUTES = Object.values(RecallRoute) as [RecallRoute, ...RecallRoute[]];
