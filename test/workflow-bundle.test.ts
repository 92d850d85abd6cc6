import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadWorkflowBundle, workflowSourcesHash, writeWorkflowBundle } from '../src/shared/workflow-bundle';

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
