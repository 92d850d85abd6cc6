import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_BUNDLE_OPTIONS } from '../runtime';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE_DIR, workflowSourcesHash, writeWorkflowBundle } from '../shared/workflow-bundle';
import { compileEntry } from './compile-entry';

/**
 * Bundles the workflows once, ahead of time (the Dockerfile runs it), and compiles the worker's
 * entry (`node .build/worker.mjs`): workers then start in seconds (docs/operations.md).
 */
async function main(): Promise<void> {
  const started = Date.now();
  const hash = await workflowSourcesHash(WORKFLOW_BUNDLE_OPTIONS);
  const { code } = await bundleWorkflowCode(WORKFLOW_BUNDLE_OPTIONS);
  await writeWorkflowBundle(code, hash);
  console.log(`workflow bundle written to ${BUNDLE_DIR} (${Math.round(code.length / 1024)} KiB, ${((Date.now() - started) / 1000).toFixed(1)} s, sources ${hash.slice(0, 12)})`);
  await compileEntry(fileURLToPath(new URL('./worker.ts', import.meta.url)), BUNDLE_DIR, hash);
  const entry = join(BUNDLE_DIR, 'worker.mjs');
  console.log(`worker entry compiled to ${entry}: start it with \`node ${entry}\``);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
