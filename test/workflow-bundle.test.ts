import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compileEntry, externalSpecifier } from '../src/cli/compile-entry';
import { assertBuiltFrom, loadWorkflowBundle, sourcesHashAtStart, StaleBuildError, workflowSourcesHash, writeWorkflowBundle } from '../src/shared/workflow-bundle';

// The prebuilt workflow bundle is used only while it was built from the sources the worker runs.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'wf-bundle-'));
  for (const dir of ['workflows', 'activities', 'src/core']) await mkdir(join(root, dir), { recursive: true });
  await writeFile(join(root, 'workflows/index.ts'), 'export const a = 1;');
  await writeFile(join(root, 'activities/index.ts'), 'export const b = 1;');
  await writeFile(join(root, 'src/core/pure.ts'), 'export const c = 1;');
  await writeFile(join(root, 'package-lock.json'), '{}');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('prebuilt workflow bundle', () => {
  it('is loaded when built from these sources', async () => {
    const hash = await workflowSourcesHash({ workflowsPath: join(root, 'workflows/index.ts') }, root);
    await writeWorkflowBundle('bundle code', hash, join(root, '.build'));
    expect(await loadWorkflowBundle(hash, join(root, '.build'))).toEqual({ code: 'bundle code' });
  });

  it('is stale after a change to a workflow, a pure module it imports or the lockfile', async () => {
    const options = { workflowsPath: join(root, 'workflows/index.ts') };
    const built = await workflowSourcesHash(options, root);
    await writeWorkflowBundle('bundle code', built, join(root, '.build'));
    for (const [file, text] of [['workflows/index.ts', 'export const a = 2;'], ['src/core/pure.ts', 'export const c = 2;'], ['package-lock.json', '{"v":2}']] as const) {
      await writeFile(join(root, file), text);
      const now = await workflowSourcesHash(options, root);
      expect(now, file).not.toBe(built);
      expect(await loadWorkflowBundle(now, join(root, '.build')), file).toBeUndefined();
    }
  });

  it('is absent when never built (the worker bundles itself)', async () => {
    expect(await loadWorkflowBundle('any', join(root, '.build'))).toBeUndefined();
  });

  it('does not depend on where the checkout lies (the image and a laptop agree)', async () => {
    const here = await workflowSourcesHash({ workflowsPath: join(root, 'workflows/index.ts') }, root);
    const copy = await mkdtemp(join(tmpdir(), 'wf-bundle-copy-'));
    try {
      for (const dir of ['workflows', 'activities', 'src/core']) await mkdir(join(copy, dir), { recursive: true });
      await writeFile(join(copy, 'workflows/index.ts'), 'export const a = 1;');
      await writeFile(join(copy, 'activities/index.ts'), 'export const b = 1;');
      await writeFile(join(copy, 'src/core/pure.ts'), 'export const c = 1;');
      await writeFile(join(copy, 'package-lock.json'), '{}');
      expect(await workflowSourcesHash({ workflowsPath: join(copy, 'workflows/index.ts') }, copy)).toBe(here);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});

describe('compiled worker entry', () => {
  it('refuses sources other than the ones it was compiled from', () => {
    expect(() => assertBuiltFrom('a'.repeat(64), 'a'.repeat(64))).not.toThrow();
    expect(() => assertBuiltFrom('a'.repeat(64), 'b'.repeat(64))).toThrow(StaleBuildError);
  });

  it('adds the extension node needs to a deep import of a package without "exports", and only there', () => {
    expect(externalSpecifier('@temporalio/common/lib/time', '/x/node_modules/@temporalio/common/lib/time.js', false)).toBe('@temporalio/common/lib/time.js');
    expect(externalSpecifier('@langchain/core/embeddings', '/x/node_modules/@langchain/core/dist/embeddings.cjs', true)).toBe('@langchain/core/embeddings');
    expect(externalSpecifier('@node-rs/jieba/dict.js', '/x/node_modules/@node-rs/jieba/dict.js', false)).toBe('@node-rs/jieba/dict.js');
  });

  it('runs under plain node with each source keeping its own import.meta.url, stamped with the sources hash', { timeout: 60_000 }, async () => {
    // Inside the checkout, so the fixture resolves packages from its node_modules as the entry does.
    await mkdir(join(process.cwd(), 'test-artifacts'), { recursive: true });
    const dir = await mkdtemp(join(process.cwd(), 'test-artifacts', 'compile-'));
    try {
      await mkdir(join(dir, 'lib'));
      await writeFile(join(dir, 'lib/where.ts'), 'export const where: string = import.meta.url;\n');
      await writeFile(join(dir, 'lib/lazy.ts'), 'export const lazyWhere: string = import.meta.url;\n');
      await writeFile(
        join(dir, 'entry.ts'),
        [
          "import { msToNumber } from '@temporalio/common/lib/time';",
          "import { where } from './lib/where';",
          'declare const __JARVIS_BUILT_SOURCES__: string | undefined;',
          "const { lazyWhere } = await import('./lib/lazy');",
          "console.log(JSON.stringify({ where, lazyWhere, here: import.meta.url, ms: msToNumber('2s'), built: typeof __JARVIS_BUILT_SOURCES__ === 'string' ? __JARVIS_BUILT_SOURCES__ : null }));",
        ].join('\n'),
      );
      await compileEntry(join(dir, 'entry.ts'), join(dir, 'out'), 'f'.repeat(64));
      const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'out/entry.mjs')]);
      expect(JSON.parse(stdout)).toEqual({ where: pathToFileURL(join(dir, 'lib/where.ts')).href, lazyWhere: pathToFileURL(join(dir, 'lib/lazy.ts')).href, here: pathToFileURL(join(dir, 'entry.ts')).href, ms: 2000, built: 'f'.repeat(64) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shares one sources hash per process between the freshness check and the bundle', async () => {
    const options = { workflowsPath: '/nowhere/index.ts' };
    expect(sourcesHashAtStart(options)).toBe(sourcesHashAtStart(options));
    expect(await sourcesHashAtStart(options)).toBe(await workflowSourcesHash(options));
  });
});
