import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

/**
 * The worker's entry compiled ahead of time into one JavaScript file next to the workflow bundle
 * (`node .build/worker.mjs`): started from the TypeScript sources, node runs every one of its
 * thousands of module loads — node_modules included — through tsx's loader thread, which took most
 * of a restart (docs/benchmarks.md). Our sources are joined, and each keeps its own
 * `import.meta.url`, so the migrations, the rule worker and the workflow sources are found where
 * they lie. Most packages stay where npm put them; the few of {@link BUNDLED_PACKAGES} are joined
 * too, because resolving and reading their hundreds of small files cost more than running them.
 */
export const BUILT_SOURCES_GLOBAL = '__JARVIS_BUILT_SOURCES__';
const CHUNK_DIR = 'chunks';

/** A deep import of a package without "exports" (`@temporalio/common/lib/time`): tsx adds the extension, node's ESM loader does not. */
export function externalSpecifier(specifier: string, resolvedFile: string, packageHasExports: boolean): string {
  if (packageHasExports || /\.[cm]?js$/.test(specifier)) return specifier;
  const ext = /\.[cm]?js$/.exec(resolvedFile)?.[0];
  return ext ? specifier + ext : specifier;
}

/**
 * Packages joined into the compiled entry (with what they import, see {@link joinsPackage}):
 * pure JavaScript of many small files that reads nothing relative to itself, and that no package
 * left outside imports — a second copy of it would then be loaded beside the joined one (the
 * LangChain integrations come with their core for that reason). Measured one by one under plain
 * node: chrono-node 250 → 35 ms, @langchain/core/messages 260 → 50 ms. `@temporalio/*` (native
 * bridge, files found relative to the package), piscina, pino, node-pg-migrate, @node-rs/jieba,
 * fastify and zod (shared with packages left outside) are never joined.
 */
export const BUNDLED_PACKAGES: readonly string[] = ['chrono-node', 'luxon', 'rrule', 'p-limit', '@langchain/core', '@langchain/community', '@langchain/openai', '@langchain/anthropic', 'chromadb', 'js-tiktoken'];

/**
 * Whether an import of package `name` is joined into the entry. From our sources: only the
 * listed packages. From inside a joined package: what it needs comes along, except a package we
 * depend on ourselves found at the same place (`sharedWithRoot`: zod, @temporalio/*…), which stays
 * one instance outside; a private copy nested under the importer is joined with it.
 */
export function joinsPackage(name: string, from: { insideJoinedPackage: boolean; ownDependency: boolean; sharedWithRoot: boolean }): boolean {
  if (BUNDLED_PACKAGES.includes(name)) return true;
  if (!from.insideJoinedPackage) return false;
  return !(from.ownDependency && from.sharedWithRoot);
}

/** This checkout's own dependencies (package.json next to this file's folder tree). */
const OWN_DEPENDENCIES: ReadonlySet<string> = new Set(
  Object.keys((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {}),
);

const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** The directory npm put package `name` in, as node finds it from `fromDir` (walking up the node_modules folders). */
function packageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

const keepSourceLayout = (rootDir: string): Plugin => ({
  name: 'keep-source-layout',
  setup(b) {
    b.onResolve({ filter: /^(?:@[^/]+\/)?[a-z0-9]/ }, (args) => {
      if (args.path.startsWith('node:') || isBuiltin(args.path)) return { path: args.path, external: true };
      const name = packageName(args.path);
      const here = packageDir(name, args.resolveDir);
      const insideJoinedPackage = args.importer.includes('/node_modules/');
      const joined = joinsPackage(name, { insideJoinedPackage, ownDependency: OWN_DEPENDENCIES.has(name), sharedWithRoot: here !== undefined && here === packageDir(name, rootDir) });
      if (joined) return undefined;
      if (!args.path.slice(name.length).startsWith('/')) return { path: args.path, external: true };
      const file = createRequire(join(args.resolveDir, 'index.js')).resolve(args.path);
      const dir = file.slice(0, file.lastIndexOf(`/node_modules/${name}/`) + `/node_modules/${name}/`.length);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { exports?: unknown };
      return { path: externalSpecifier(args.path, file, manifest.exports !== undefined), external: true };
    });
    b.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const text = await readFile(args.path, 'utf8');
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
});

/**
 * Compiles `entry` to `<outdir>/<its name>.mjs`, stamped with the hash of the sources it was built
 * from (the entry refuses to start once they changed). What is imported lazily (the HTTP API, which
 * a worker never serves) goes to chunks of its own, loaded only when asked for.
 */
export async function compileEntry(entry: string, outdir: string, sourcesHash: string): Promise<void> {
  // Chunks of an earlier build would only accumulate: their names carry their content's hash.
  await rm(join(outdir, CHUNK_DIR), { recursive: true, force: true });
  await build({
    entryPoints: [entry],
    outdir,
    entryNames: '[name]',
    chunkNames: `${CHUNK_DIR}/[name]-[hash]`,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // CommonJS code of a joined package calls require() for node's modules and for what stays outside.
    banner: { js: "import { createRequire as __jarvisCreateRequire } from 'node:module'; const require = __jarvisCreateRequire(import.meta.url);" },
    sourcemap: 'linked',
    define: { [BUILT_SOURCES_GLOBAL]: JSON.stringify(sourcesHash) },
    plugins: [keepSourceLayout(dirname(entry))],
    logLevel: 'warning',
  });
}
