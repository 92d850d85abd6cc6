import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_BUNDLE_OPTIONS } from '../runtime';
import { BUNDLE_DIR, workflowSourcesHash, writeWorkflowBundle } from '../shared/workflow-bundle';

/** Bundles the workflows once, ahead of time (the Dockerfile runs it): workers then start in seconds. */
async function main(): Promise<void> {
  const started = Date.now();
  const hash = await workflowSourcesHash(WORKFLOW_BUNDLE_OPTIONS);
  const { code } = await bundleWorkflowCode(WORKFLOW_BUNDLE_OPTIONS);
  await writeWorkflowBundle(code, hash);
  console.log(`workflow bundle written to ${BUNDLE_DIR} (${Math.round(code.length / 1024)} KiB, ${((Date.now() - started) / 1000).toFixed(1)} s, sources ${hash.slice(0, 12)})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
