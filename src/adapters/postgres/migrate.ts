import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runner } from 'node-pg-migrate';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

/** Applies pending SQL migrations (versioned files in `migrations/`) under an advisory lock. */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    // Two processes starting together (two workers, an API next to a worker) queue on the lock; the
    // second finds nothing left to apply. The default, 'fail', made it exit at start.
    advisoryLockMode: 'wait',
    log,
    verbose: false,
  });
  return applied.map((m) => m.name);
}

/** A process that does not migrate found the schema behind its code. */
export class SchemaBehindError extends Error {
  constructor(readonly pending: string[]) {
    super(`the database schema is behind this version: ${pending.length} migration(s) not applied (${pending.join(', ')}); run \`npm run migrate\` first`);
    this.name = 'SchemaBehindError';
  }
}

/** The migrations in `migrations/` that the database has not applied, in order. */
export async function pendingMigrations(databaseUrl: string): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).map((f) => f.replace(/\.sql$/, '')).sort();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const table = await client.query<{ t: string | null }>("SELECT to_regclass('pgmigrations')::text AS t");
    if (!table.rows[0]?.t) return files;
    const applied = new Set((await client.query<{ name: string }>('SELECT name FROM pgmigrations')).rows.map((r) => r.name));
    return files.filter((f) => !applied.has(f));
  } finally {
    await client.end();
  }
}

/** Refuses to go on when a migration is missing: code would query columns that are not there. */
export async function assertSchemaCurrent(databaseUrl: string): Promise<void> {
  const pending = await pendingMigrations(databaseUrl);
  if (pending.length > 0) throw new SchemaBehindError(pending);
}
