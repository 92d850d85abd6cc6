import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The workflow bundle built ahead of time (`npm run build:workflows`, the Dockerfile runs it), so a
 * worker restart loads it instead of bundling for 20–45 s. It is used only while fresh: the hash of
 * the sources it was built from must match the sources the worker runs, or the worker would replay
 * histories with other code than its activities'.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BUNDLE_DIR = join(ROOT, '.build');
const CODE_FILE = 'workflows.js';
const MANIFEST_FILE = 'workflows.json';

/**
 * Everything the bundle can include. Wider than what the workflows import (any source change makes
 * it stale), since a stale bundle that looks fresh would be the worse mistake; the lockfile stands
 * for the SDK's own version.
 */
const SOURCE_DIRS = ['workflows', 'activities', 'src'];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && /\.[cm]?[jt]s$/.test(e.name)).map((e) => join(e.parentPath, e.name));
}

/** The hash of the workflow sources, the lockfile and the bundling options. */
export async function workflowSourcesHash(options: object, root = ROOT): Promise<string> {
  const files = (await Promise.all(SOURCE_DIRS.map((d) => sourceFiles(join(root, d))))).flat();
  files.push(join(root, 'package-lock.json'));
  const hash = createHash('sha256').update(JSON.stringify(options, (_k, v: unknown) => (typeof v === 'string' ? relative(root, v) : v)));
  const names = files.map((f) => relative(root, f)).sort();
  // Read all at once (a few hundred small files): one at a time, the reads alone took a restart's half second.
  const contents = await Promise.all(names.map((file) => readFile(join(root, file))));
  names.forEach((file, i) => hash.update(`\0${file}\0`).update(contents[i]!));
  return hash.digest('hex');
}

let atStart: { key: string; hash: Promise<string> } | undefined;

/**
 * {@link workflowSourcesHash} of the running process, computed once: the compiled entry's
 * freshness check and the workflow bundle's share it. The sources of a running process do not
 * change under it in any way that matters (it already imported them).
 */
export function sourcesHashAtStart(options: object): Promise<string> {
  const key = JSON.stringify(options);
  if (atStart?.key !== key) atStart = { key, hash: workflowSourcesHash(options) };
  return atStart.hash;
}

/** The compiled entry (.build/worker.mjs) runs only the sources it was compiled from. */
export class StaleBuildError extends Error {
  constructor(readonly builtFrom: string, readonly sources: string) {
    super(`the compiled entry was built from other sources (${builtFrom.slice(0, 12)}, these are ${sources.slice(0, 12)}): run \`npm run build:workflows\` again, or start from the sources (\`npm run worker\`)`);
    this.name = 'StaleBuildError';
  }
}

/** Throws {@link StaleBuildError} unless the sources are the ones the entry was compiled from. */
export function assertBuiltFrom(builtFrom: string, sources: string): void {
  if (builtFrom !== sources) throw new StaleBuildError(builtFrom, sources);
}

/** Writes the bundle and its manifest (hash of the sources it was built from); the code first, so a crash leaves no manifest naming missing code. */
export async function writeWorkflowBundle(code: string, hash: string, dir = BUNDLE_DIR): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${CODE_FILE}.tmp`), code);
  await rename(join(dir, `${CODE_FILE}.tmp`), join(dir, CODE_FILE));
  await writeFile(join(dir, MANIFEST_FILE), JSON.stringify({ hash, builtAt: new Date().toISOString() }));
}

/** The prebuilt bundle when present and built from these sources; undefined (bundle now) otherwise. */
export async function loadWorkflowBundle(hash: string, dir = BUNDLE_DIR): Promise<{ code: string } | undefined> {
  try {
    const manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as { hash?: unknown };
    if (manifest.hash !== hash) return undefined;
    return { code: await readFile(join(dir, CODE_FILE), 'utf8') };
  } catch {
    // No bundle built (development): the worker bundles itself.
    return undefined;
  }
}
