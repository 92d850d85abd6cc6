/** One node of `EXPLAIN (ANALYZE, FORMAT JSON)`: the fields the plan tests read. */
export interface PlanNode {
  'Node Type'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
export function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/**
 * Rows the plan's scans read from `table` over all loops, those its filters then dropped
 * included. A write's own node (ModifyTable) is left out: it names the table it writes, not a read.
 */
export function rowsRead(plan: PlanNode, table: string): number {
  return nodesOf(plan)
    .filter((n) => n['Relation Name'] === table && n['Node Type'] !== 'ModifyTable')
    .reduce((sum, n) => sum + ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * (n['Actual Loops'] ?? 1), 0);
}

/** Rows a join's filter compared and dropped, over all loops: a rescan once per outer row shows here. */
export function joinComparisons(plan: PlanNode): number {
  return nodesOf(plan).reduce((sum, n) => sum + (n['Rows Removed by Join Filter'] ?? 0) * (n['Actual Loops'] ?? 1), 0);
}
