import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Worker } from '@temporalio/worker';
import { ensureDatabase } from '../../src/stack/local-postgres';
import { loadConfig, type AppConfig } from '../../src/config';
import { createRuntime, type Runtime } from '../../src/runtime';
import { MemoryClient } from '../../src/client/index';
import { extractWorkflowId } from '../../workflows/conversation/conversation';

export const TEST_KEY = 'test-key-tenant-a';
export const OTHER_TENANT_KEY = 'test-key-tenant-b';

export interface TestContext {
  runtime: Runtime;
  worker: Worker;
  workerRun: Promise<void>;
  api: FastifyInstance;
  baseUrl: string;
  taskQueue: string;
  prefix: string;
  /** The storage key of a user of tenant-a (TEST_KEY's tenant) or of another tenant. */
  userKey(userId: string, tenantId?: string): string;
  /** The ExtractMemories workflow id of a tenant-a user's conversation. */
  extractWorkflowId(userId: string, conversationId: string): string;
  /** fetch against the API with the test tenant's key (or another header set). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An isolated slice of the shared real stack for one test file: its own PostgreSQL database, its
 * own Chroma collection, its own Temporal task queue, a running worker and a listening API.
 */
export async function createTestContext(overrides: Partial<Record<string, string>> = {}): Promise<TestContext> {
  const stack = inject('stack');
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const dbName = `test_${prefix}`;
  const admin = new URL(stack.databaseUrl);
  admin.pathname = '/postgres';
  await ensureDatabase(admin.toString(), dbName);
  const databaseUrl = new URL(stack.databaseUrl);
  databaseUrl.pathname = `/${dbName}`;

  const config: AppConfig = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    API_KEYS: `tenant-a:${TEST_KEY},tenant-b:${OTHER_TENANT_KEY}`,
    CHROMA_COLLECTION: `mem_${prefix}`,
    TEMPORAL_TASK_QUEUE: `q-${prefix}`,
    LOG_LEVEL: 'warn',
    CONVERSATION_IDLE_SECONDS: '3600',
    // Timed per-user schedules firing mid-run would add digests and nudges to other tests' users.
    PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE: 'false',
    ...overrides,
  });
  // As startStack does: a Temporal or Chroma the overrides name is used instead of the shared one
  // (a TLS terminator or a proxy in front of it), with the settings that go with it.
  const runtime = await createRuntime(config, {
    ...stack,
    ...(config.temporal.address ? { temporalAddress: config.temporal.address } : {}),
    ...(config.chroma.url ? { chromaUrl: config.chroma.url } : {}),
    databaseUrl: databaseUrl.toString(),
    dataDir: '',
  });
  const taskQueue = config.temporal.taskQueue;
  const bundle = { code: inject('workflowBundle') };
  let worker = await runtime.createWorker({ taskQueue, workflowBundle: bundle });
  let workerRun = worker.run();
  const api = await runtime.createApi({ taskQueue });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const address = api.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const ctx: TestContext = {
    runtime,
    get worker() {
      return worker;
    },
    get workerRun() {
      return workerRun;
    },
    api,
    baseUrl,
    taskQueue,
    prefix,
    userKey: (userId, tenantId = 'tenant-a') => runtime.subjects.userKey({ tenantId, userId }),
    extractWorkflowId(userId, conversationId) {
      const key = runtime.subjects.userKey({ tenantId: 'tenant-a', userId });
      return extractWorkflowId(key, runtime.subjects.ref(key, 'conversation', conversationId));
    },
    async call(method, path, body, headers) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${TEST_KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Non-JSON bodies are returned as text for the assertion to show.
      }
      return { status: res.status, body: parsed };
    },
    async stopWorker() {
      worker.shutdown();
      await workerRun;
    },
    async startWorker() {
      worker = await runtime.createWorker({ taskQueue, workflowBundle: bundle });
      workerRun = worker.run();
    },
    async close() {
      if (worker.getState() === 'RUNNING') {
        worker.shutdown();
        await workerRun;
      }
      await api.close();
      await runtime.close();
    },
  };
  return ctx;
}

/**
 * A test file's own context and an HTTP client of the test tenant (TEST_KEY): created before the
 * file's tests, closed after them. Read `ctx` and `client` inside tests and hooks only.
 */
export function useTestContext(overrides: Partial<Record<string, string>> = {}): { readonly ctx: TestContext; readonly client: MemoryClient } {
  const slot: { ctx?: TestContext; client?: MemoryClient } = {};
  beforeAll(async () => {
    slot.ctx = await createTestContext(overrides);
    slot.client = new MemoryClient({ baseUrl: slot.ctx.baseUrl, apiKey: TEST_KEY });
  });
  afterAll(async () => {
    await slot.ctx?.close();
  });
  return {
    get ctx() {
      return slot.ctx!;
    },
    get client() {
      return slot.client!;
    },
  };
}
