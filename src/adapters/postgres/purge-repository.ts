import type { PurgeAuditLog, PurgeAuditRecord, UserRowPurge } from '../../core/ports/privacy';
import type { PurgeCounts } from '../../core/privacy/purge';
import { longQuery, type Queryable } from './pool';

/**
 * Every PostgreSQL table that holds rows of a user, in an order that satisfies the foreign keys
 * (children first, `users` last), with how to find the user's rows in it. A table added with a
 * `user_id` column must be added here: test/privacy.int.test.ts compares this list with
 * information_schema and fails otherwise.
 */
export const PURGE_TABLES: readonly { table: string; rows: string }[] = [
  { table: 'memory_terms', rows: 'SELECT ctid FROM memory_terms WHERE user_id = $1' },
  { table: 'episode_terms', rows: 'SELECT ctid FROM episode_terms WHERE user_id = $1' },
  { table: 'relations', rows: 'SELECT ctid FROM relations WHERE user_id = $1' },
  // No user_id column: its rows are the user's through either end of the link.
  {
    table: 'memory_entities',
    rows: `SELECT me.ctid FROM memory_entities me JOIN entities e ON e.id = me.entity_id WHERE e.user_id = $1
           UNION ALL
           SELECT me.ctid FROM memory_entities me JOIN memories m ON m.id = me.memory_id WHERE m.user_id = $1`,
  },
  { table: 'vector_outbox', rows: 'SELECT ctid FROM vector_outbox WHERE user_id = $1' },
  { table: 'extraction_pages', rows: 'SELECT ctid FROM extraction_pages WHERE user_id = $1' },
  { table: 'message_quarantine', rows: 'SELECT ctid FROM message_quarantine WHERE user_id = $1' },
  { table: 'memory_events', rows: 'SELECT ctid FROM memory_events WHERE user_id = $1' },
  // The persona repeats memory texts: it goes before the memories it was built from.
  { table: 'user_profiles', rows: 'SELECT ctid FROM user_profiles WHERE user_id = $1' },
  { table: 'user_scenes', rows: 'SELECT ctid FROM user_scenes WHERE user_id = $1' },
  { table: 'notifications', rows: 'SELECT ctid FROM notifications WHERE user_id = $1' },
  { table: 'digests', rows: 'SELECT ctid FROM digests WHERE user_id = $1' },
  { table: 'reminders', rows: 'SELECT ctid FROM reminders WHERE user_id = $1' },
  { table: 'episodes', rows: 'SELECT ctid FROM episodes WHERE user_id = $1' },
  // The graph over exchanges links the user's lines: it goes before the messages it references.
  { table: 'exchange_entities', rows: 'SELECT ctid FROM exchange_entities WHERE user_id = $1' },
  // Messages before their postings: the postings' delete trigger then only adjusts statistics
  // that are deleted a moment later, instead of rewriting doomed message rows.
  { table: 'messages', rows: 'SELECT ctid FROM messages WHERE user_id = $1' },
  { table: 'message_terms', rows: 'SELECT ctid FROM message_terms WHERE user_id = $1' },
  { table: 'memories', rows: 'SELECT ctid FROM memories WHERE user_id = $1' },
  // Written by the memories' own delete trigger a line above (migration 1797600000000).
  { table: 'memory_deletion_marks', rows: 'SELECT ctid FROM memory_deletion_marks WHERE user_id = $1' },
  { table: 'entities', rows: 'SELECT ctid FROM entities WHERE user_id = $1' },
  { table: 'conversations', rows: 'SELECT ctid FROM conversations WHERE user_id = $1' },
  { table: 'user_index_stats', rows: 'SELECT ctid FROM user_index_stats WHERE user_id = $1' },
  { table: 'message_index_stats', rows: 'SELECT ctid FROM message_index_stats WHERE user_id = $1' },
  { table: 'episode_index_stats', rows: 'SELECT ctid FROM episode_index_stats WHERE user_id = $1' },
  // Emptied by the postings' delete triggers already; listed so nothing of the user can remain.
  { table: 'memory_term_df', rows: 'SELECT ctid FROM memory_term_df WHERE user_id = $1' },
  { table: 'message_term_df', rows: 'SELECT ctid FROM message_term_df WHERE user_id = $1' },
  { table: 'episode_term_df', rows: 'SELECT ctid FROM episode_term_df WHERE user_id = $1' },
  // Purge revokes the user's API keys with the rest of their rows.
  { table: 'user_api_keys', rows: 'SELECT ctid FROM user_api_keys WHERE user_id = $1' },
  { table: 'legacy_user_moves', rows: 'SELECT ctid FROM legacy_user_moves WHERE user_id = $1' },
  { table: 'users', rows: 'SELECT ctid FROM users WHERE user_id = $1' },
];

/** The user's rows, table by table in {@link PURGE_TABLES} order, inside the caller's transaction. */
export class PostgresUserRowPurge implements UserRowPurge {
  constructor(private readonly db: Queryable) {}

  async deleteNextRows({ userKey, from, limit }: { userKey: string; from?: string; limit: number | null }): Promise<{ table: string; deleted: number; next: string | null } | undefined> {
    const start = from === undefined ? 0 : PURGE_TABLES.findIndex((t) => t.table === from);
    if (start < 0) throw new Error(`not a purge table: ${from}`);
    for (let i = start; i < PURGE_TABLES.length; i++) {
      const { table } = PURGE_TABLES[i]!;
      const deleted = await this.deleteRows(userKey, table, limit);
      if (deleted === 0) continue;
      const more = limit !== null && deleted >= limit;
      return { table, deleted, next: more ? table : (PURGE_TABLES[i + 1]?.table ?? null) };
    }
    return undefined;
  }

  /**
   * Deletes up to `limit` of the user's rows from one table (all of them with `limit` null).
   * Returns how many went; repeating it once nothing is left deletes nothing.
   */
  async deleteRows(userKey: string, table: string, limit: number | null): Promise<number> {
    const c = this.db;
    const spec = PURGE_TABLES.find((t) => t.table === table);
    if (!spec) throw new Error(`not a purge table: ${table}`);
    if (table === 'memories') await clearSupersedeLinks(c, userKey, limit);
    // A page of a large user, or everything left in the last pass: bounded as a long statement (pool.ts).
    const { rowCount } = await longQuery(c, `DELETE FROM ${spec.table} WHERE ctid = ANY(ARRAY(${spec.rows} LIMIT $2))`, [userKey, limit]);
    return rowCount ?? 0;
  }
}

/** The purge audit (`purge_audit`): numbers and a keyed user reference only. */
export class PostgresPurgeAuditLog implements PurgeAuditLog {
  constructor(private readonly db: Queryable) {}

  /** Starts the audit row of a purge run (idempotent: a retried activity finds it). */
  async begin(a: { tenantId: string; userRef: string; workflowId: string; runId: string; requestedAt: Date }): Promise<void> {
    await this.db.query(
      `INSERT INTO purge_audit (tenant_id, user_ref, workflow_id, run_id, requested_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (run_id) DO NOTHING`,
      [a.tenantId, a.userRef, a.workflowId, a.runId, a.requestedAt],
    );
  }

  async complete(a: { runId: string; completedAt: Date; counts: PurgeCounts }): Promise<void> {
    await this.db.query('UPDATE purge_audit SET completed_at = $2, counts = $3 WHERE run_id = $1', [a.runId, a.completedAt, JSON.stringify(a.counts)]);
  }

  /** Past purges of a user ref (operators answering "was this person's data erased?"). */
  async list({ tenantId, userRef }: { tenantId: string; userRef: string }): Promise<PurgeAuditRecord[]> {
    const { rows } = await this.db.query(
      'SELECT workflow_id, run_id, requested_at, completed_at, counts FROM purge_audit WHERE tenant_id = $1 AND user_ref = $2 ORDER BY id',
      [tenantId, userRef],
    );
    return rows.map((r) => ({ workflowId: r.workflow_id, runId: r.run_id, requestedAt: r.requested_at, completedAt: r.completed_at, counts: r.counts }));
  }
}

/**
 * A memory may name another of the same user as the one it supersedes (or is superseded by);
 * deleting the user's memories page by page would trip over a link into a later page.
 */
async function clearSupersedeLinks(c: Queryable, userKey: string, limit: number | null): Promise<void> {
  for (;;) {
    const { rowCount } = await longQuery(
      c,
      `UPDATE memories SET supersedes = NULL, superseded_by = NULL
        WHERE ctid = ANY(ARRAY(SELECT ctid FROM memories WHERE user_id = $1 AND (supersedes IS NOT NULL OR superseded_by IS NOT NULL) LIMIT $2))`,
      [userKey, limit],
    );
    if (limit === null || (rowCount ?? 0) < limit) return;
  }
}
