import { fileURLToPath } from 'node:url';
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
