import type pg from 'pg';

/** One statement as a repository sent it: a text with values, named when it is a prepared statement. */
export interface SentStatement {
  name?: string;
  text: string;
  values: unknown[];
}

/** Reads `pool.query`'s arguments, either `(text, values)` or a query config `{ name, text, values }`. */
export function sentStatement(first: unknown, second?: unknown): SentStatement {
  if (typeof first === 'string') return { text: first, values: (second as unknown[] | undefined) ?? [] };
  const config = first as { name?: string; text: string; values?: unknown[] };
  return { ...(config.name ? { name: config.name } : {}), text: config.text, values: config.values ?? [] };
}

function literal(client: pg.PoolClient, v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (v instanceof Date) return client.escapeLiteral(v.toISOString());
  if (Array.isArray(v)) {
    const items = v.map((x) => (x instanceof Date ? x.toISOString() : String(x))).map((x) => `"${x.replace(/\\/gu, '\\\\').replace(/"/gu, '\\"')}"`);
    return client.escapeLiteral(`{${items.join(',')}}`);
  }
  return client.escapeLiteral(String(v));
}

/**
 * EXPLAIN ANALYZE of a statement's generic plan: the plan PostgreSQL may cache for a named
 * statement after its fifth execution and reuse whatever the parameters (plan_cache_mode auto),
 * planned without the parameters' values. Forced here on a client of its own.
 */
export async function explainGeneric<T>(pool: pg.Pool, statement: SentStatement): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE generic_probe AS ${statement.text}`);
    const args = statement.values.map((v) => literal(client, v)).join(', ');
    const { rows } = await client.query<{ 'QUERY PLAN': T }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE generic_probe(${args})`);
    return rows[0]!['QUERY PLAN'];
  } finally {
    // The client is closed, not returned: its session setting must not reach another test's statements.
    client.release(true);
  }
}

/**
 * Tuples a statement read from `table` when run under EXPLAIN ANALYZE, the statements of the
 * functions it calls included (recall's ordered reads are functions planned with sorting off,
 * whose scans no plan of the caller shows): the table's scan counters (index entries read, rows
 * read by sequential scans) before and after, on one client that flushes its counters each time.
 */
export async function tuplesReadBy(pool: pg.Pool, statement: { sql: string; params: unknown[] }, table: string): Promise<number> {
  const client = await pool.connect();
  try {
    const counted = async (): Promise<number> => {
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ n: string }>(
        `SELECT (SELECT COALESCE(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = $1)
              + (SELECT COALESCE(sum(seq_tup_read), 0) FROM pg_stat_user_tables WHERE relname = $1) AS n`,
        [table],
      );
      return Number(rows[0]!.n);
    };
    const before = await counted();
    await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`, statement.params);
    return (await counted()) - before;
  } finally {
    client.release();
  }
}

/** A pool whose queries are also kept, to replay under EXPLAIN exactly what a repository sent. */
export function capturing(pool: pg.Pool): { db: pg.Pool; last: () => { sql: string; params: unknown[] } } {
  let last: { sql: string; params: unknown[] } | undefined;
  const db = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return (first: unknown, second?: unknown) => {
          const sent = sentStatement(first, second);
          last = { sql: sent.text, params: sent.values };
          return (target.query as (...a: unknown[]) => unknown)(first, second);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { db, last: () => last! };
}

/**
 * Pages of `table` and of its indexes visited so far in the transaction open on `client`, from
 * PostgreSQL's counters of the current transaction (which count a write's reads too and need no
 * flush). Pages, not tuples: an index scan counts only the entries that matched, so a probe
 * that walked a whole user's range to find three shows in its pages alone. Take it before and
 * after the work and subtract.
 */
export async function pagesVisitedInTransaction(client: pg.PoolClient, table: string): Promise<number> {
  // No view shows an index's counters of the current transaction; the functions behind the views do.
  const { rows } = await client.query<{ n: string }>(
    `SELECT pg_stat_get_xact_blocks_fetched($1::regclass)
          + COALESCE((SELECT sum(pg_stat_get_xact_blocks_fetched(indexrelid)) FROM pg_index WHERE indrelid = $1::regclass), 0) AS n`,
    [table],
  );
  return Number(rows[0]!.n);
}
