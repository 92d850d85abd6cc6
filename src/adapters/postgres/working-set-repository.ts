import type { WorkingSetChanges, WorkingSetMark, WorkingSetRow } from '../../core/recall/working-set';
import { COLUMNS, rowToMemory, type MemoryRow } from './memory-repository';
import type { Queryable } from './pool';
import { bind, prepared } from './prepared';
import { NO_MEMORY, stablePrefixBranches, stablePrefixOf } from './recall-lists-repository';

const M_COLUMNS = COLUMNS.split(',')
  .map((c) => `m.${c.trim()}`)
  .join(', ');

/**
 * The memory branch comes first: UNION ALL takes each column's type from it. The rows are read
 * through `recall_written_since` (migrations 1797700000000 and 1797800000000), one index range whatever the
 * statistics say; their postings per memory through memory_terms' memory_id index (with the
 * user's id in that probe, the planner read the user's whole postings range once per memory);
 * `doc_length` is the memory's own copy.
 */
function statement(opts: { activeOnly: boolean; stablePrefix: boolean }): string {
  return `(SELECT 'memory' AS part, NULL::jsonb AS extra, ${M_COLUMNS}, t.terms, t.tfs, m.doc_length, m.written_xid::text AS written_xid
             FROM recall_written_since($1, $2::xid8, ${opts.activeOnly}, $3) m
             LEFT JOIN LATERAL (SELECT array_agg(x.term) AS terms, array_agg(x.tf) AS tfs
                                  FROM memory_terms x WHERE x.memory_id = m.id) t ON true)
          UNION ALL
          (SELECT 'mark', jsonb_build_object(
                    'horizon', pg_snapshot_xmin(pg_current_snapshot())::text,
                    'registeredAt', (SELECT u.created_at FROM users u WHERE u.user_id = $1),
                    'deletedXid', (SELECT d.deleted_xid::text FROM memory_deletion_marks d WHERE d.user_id = $1),
                    'truncations', (SELECT c.count::text FROM memory_truncations c)),
                  ${NO_MEMORY}, NULL, NULL, NULL, NULL)${
                    opts.stablePrefix
                      ? `
          UNION ALL
          ${stablePrefixBranches({ user: '$1', now: '$4::timestamptz', persona: 'true', scenes: 'true', history: 'true', moreNulls: 4 })}`
                      : ''
                  }`;
}

/**
 * A user's active memories with their postings ($2 = '0': every row). Sent unnamed, so planned
 * with its values each time: run once per user per load, its planning costs nothing that matters,
 * and its generic plan read every memory of every user (test/bm25-plans.int.test.ts).
 */
const LOAD = statement({ activeOnly: true, stablePrefix: false });
/** Rows written since a horizon, and what recall reads beside memories (persona, scene block, history). */
const CHANGES = prepared(statement({ activeOnly: false, stablePrefix: true }));

type Row = MemoryRow & { part: 'memory' | 'mark' | 'persona' | 'scenes' | 'history'; extra: unknown; terms: string[] | null; tfs: number[] | null; doc_length: number | null; written_xid: string | null };

/** The statements behind the working-set cache (src/recall/working-set-cache.ts). */
export class PostgresWorkingSetSource {
  constructor(private readonly db: Queryable) {}

  /** Every active memory of the user, or `tooMany` past `limit` (nothing is kept then). */
  async load(userId: string, limit: number): Promise<{ mark: WorkingSetMark; rows: WorkingSetRow[] } | 'tooMany'> {
    const { rows } = await this.db.query<Row>(LOAD, [userId, '0', limit + 1]);
    const memories = rows.filter((r) => r.part === 'memory');
    if (memories.length > limit) return 'tooMany';
    return { mark: markOf(rows), rows: memories.map(workingSetRow) };
  }

  /** What changed since `horizon` (at most `limit` rows: past that, the caller loads the user again). */
  async changes(userId: string, now: Date, horizon: bigint, limit: number): Promise<WorkingSetChanges> {
    const { rows } = await this.db.query<Row>(bind(CHANGES, [userId, horizon.toString(), limit, now]));
    return {
      mark: markOf(rows),
      rows: rows.filter((r) => r.part === 'memory').map(workingSetRow),
      stablePrefix: stablePrefixOf(rows),
    };
  }
}

function markOf(rows: readonly Row[]): WorkingSetMark {
  const mark = rows.find((r) => r.part === 'mark')?.extra as { horizon: string; registeredAt: string | null; deletedXid: string | null; truncations: string };
  return {
    horizon: BigInt(mark.horizon),
    registeredAt: mark.registeredAt,
    deletedXid: mark.deletedXid === null ? null : BigInt(mark.deletedXid),
    truncations: mark.truncations,
  };
}

function workingSetRow(r: Row): WorkingSetRow {
  return { memory: rowToMemory(r), version: BigInt(r.written_xid ?? '0'), postings: { terms: r.terms ?? [], tfs: r.tfs ?? [], docLength: r.doc_length ?? 0 } };
}
