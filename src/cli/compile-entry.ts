import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

/**
 * The worker's entry compiled ahead of time into one JavaScript file next to the workflow bundle
 * (`node .build/worker.mjs`): started from the TypeScript sources, node runs every one of its
 * thousands of module loads — node_modules included — through tsx's loader thread, which took most
 * of a restart (docs/benchmarks.md). The packages stay where npm put them; only our sources are
 * joined, and each keeps its own `import.meta.url`, so the migrations, the rule worker and the
 * workflow sources are found where they lie.
 */
export const BUILT_SOURCES_GLOBAL = '__JARVIS_BUILT_SOURCES__';
const CHUNK_DIR = 'chunks';

/** A deep import of a package without "exports" (`@temporalio/common/lib/time`): tsx adds the extension, node's ESM loader does not. */
export function externalSpecifier(specifier: string, resolvedFile: string, packageHasExports: boolean): string {
  if (packageHasExports || /\.[cm]?js$/.test(specifier)) return specifier;
  const ext = /\.[cm]?js$/.exec(resolvedFile)?.[0];
  return ext ? specifier + ext : specifier;
}

const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

const keepSourceLayout: Plugin = {
  name: 'keep-source-layout',
  setup(b) {
    b.onResolve({ filter: /^(?:@[^/]+\/)?[a-z0-9][^/]*\/./ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const name = packageName(args.path);
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
};

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
    packages: 'external',
    sourcemap: 'linked',
    define: { [BUILT_SOURCES_GLOBAL]: JSON.stringify(sourcesHash) },
    plugins: [keepSourceLayout],
    logLevel: 'warning',
  });
}
