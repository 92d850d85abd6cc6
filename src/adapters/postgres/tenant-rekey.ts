import type pg from 'pg';
import { longQuery } from './pool';

/** A user whose rows moved from their old id to the (tenant, user) key. */
export interface Rekeyed {
  from: string;
  to: string;
}

/**
 * Moves users stored before tenants owned their users (`external_id IS NULL`) to their (tenant,
 * user) key: every table with a `user_id` column, in one transaction, so no reader sees half a
 * user. Their vectors follow through `legacy_user_moves` (see `finishVectorMoves`). The tenant is the one that had claimed the user (the `dev` tenant for a single-tenant
 * install), which keeps each user with the only tenant that could reach them before. Runs at
 * every start; a second run finds nothing to do.
 */
export async function rekeyLegacyUsers(pool: pg.Pool, userKey: (tenantId: string, userId: string) => string): Promise<void> {
  const client = await pool.connect();
  // Every table of every legacy user in one transaction, at start: long statements (pool.ts).
  const query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => longQuery<R>(client, text, values);
  try {
    await query('BEGIN');
    const { rows: legacy } = await query<{ user_id: string; tenant_id: string }>(
      'SELECT user_id, tenant_id FROM users WHERE external_id IS NULL ORDER BY user_id FOR UPDATE',
    );
    if (legacy.length === 0) {
      await query('COMMIT');
      return;
    }
    const moves = legacy.map((u) => ({ from: u.user_id, to: userKey(u.tenant_id, u.user_id) }));
    await query('SET CONSTRAINTS ALL DEFERRED');
    await query('UPDATE users SET external_id = user_id WHERE external_id IS NULL');
    await query('CREATE TEMP TABLE rekey (old_id text PRIMARY KEY, new_id text NOT NULL) ON COMMIT DROP');
    await query('INSERT INTO rekey SELECT * FROM unnest($1::text[], $2::text[])', [moves.map((m) => m.from), moves.map((m) => m.to)]);
    const { rows: tables } = await query<{ table_name: string }>(
      `SELECT c.table_name FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
        WHERE c.table_schema = current_schema() AND c.column_name = 'user_id'`,
    );
    for (const { table_name } of tables) {
      await query(`UPDATE ${client.escapeIdentifier(table_name)} t SET user_id = r.new_id FROM rekey r WHERE t.user_id = r.old_id`);
    }
    await query('INSERT INTO legacy_user_moves (user_id, old_id) SELECT new_id, old_id FROM rekey ON CONFLICT (user_id) DO NOTHING');
    await query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Moves the Chroma collections of rekeyed users, each marked done only after its move, so a crash
 * anywhere leaves the rest for the next start.
 */
export async function finishVectorMoves(pool: pg.Pool, move: (m: Rekeyed) => Promise<void>): Promise<number> {
  const { rows } = await pool.query<{ user_id: string; old_id: string }>('SELECT user_id, old_id FROM legacy_user_moves WHERE vectors_moved_at IS NULL');
  for (const r of rows) {
    await move({ from: r.old_id, to: r.user_id });
    await pool.query('UPDATE legacy_user_moves SET vectors_moved_at = now() WHERE user_id = $1', [r.user_id]);
  }
  return rows.length;
}
