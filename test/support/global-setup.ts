import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config';
import { WORKFLOW_BUNDLE_OPTIONS } from '../../src/runtime';
import { startStack, type RunningStack } from '../../src/stack';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: { temporalAddress: string; databaseUrl: string; chromaUrl: string; embeddingsUrl?: string; temporalUiUrl?: string };
    workflowBundle: string;
  }
}

let stack: RunningStack | undefined;

/**
 * Starts the real stack once for all integration files — Temporal dev server, PostgreSQL, Chroma
 * and the offline embedder — except the parts whose URLs the environment gives. A service that
 * cannot start fails the run; nothing is skipped.
 */
export async function setup(project: TestProject): Promise<void> {
  const config = loadConfig({ ...process.env, DATA_DIR: process.env.TEST_DATA_DIR ?? `.data/test-${process.pid}` });
  stack = await startStack(config, { ephemeral: true, log: (line) => console.log(`[test stack] ${line}`) });
  project.provide('stack', {
    temporalAddress: stack.temporalAddress,
    databaseUrl: stack.databaseUrl,
    chromaUrl: stack.chromaUrl,
    embeddingsUrl: stack.embeddingsUrl,
    temporalUiUrl: stack.temporalUiUrl,
  });
  // Built as the worker builds it: with the payload converter and interceptor that let the
  // encryption codec pick each user's data key.
  const bundle = await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never });
  project.provide('workflowBundle', bundle.code);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
  if (stack && !process.env.KEEP_TEST_DATA) {
    const { rm } = await import('node:fs/promises');
    await rm(stack.dataDir, { recursive: true, force: true });
  }
}
