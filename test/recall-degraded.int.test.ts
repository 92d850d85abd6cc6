import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';
import { findExecutable } from '../src/stack/binaries';
import { startLocalChroma, type LocalChroma } from '../src/stack/local-chroma';
import { ensureDatabase } from '../src/stack/local-postgres';
import { freePort } from '../src/stack/managed-process';
import { seedMemories } from './support/seed';

// This file runs its own Chroma so it can stop it without disturbing the other test files.
let chroma: LocalChroma;
let runtime: Runtime;
const dataDir = join(tmpdir(), `jarvis-chroma-${randomBytes(4).toString('hex')}`);

beforeAll(async () => {
  const stack = inject('stack');
  const chromaPath = findExecutable('chroma', { stackDir: '.stack' });
  if (!chromaPath) throw new Error('chroma executable not found; run npm run setup');
  chroma = await startLocalChroma({ chromaPath, dataDir, port: await freePort(), logFile: join(dataDir, 'chroma.log') });
  const db = `test_degraded_${randomBytes(3).toString('hex')}`;
  const admin = new URL(stack.databaseUrl);
  admin.pathname = '/postgres';
  await ensureDatabase(admin.toString(), db);
  const url = new URL(stack.databaseUrl);
  url.pathname = `/${db}`;
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', RECALL_TIMEOUT_MS: '1500' });
  runtime = await createRuntime(config, { ...stack, chromaUrl: chroma.url, databaseUrl: url.toString(), dataDir });
});

afterAll(async () => {
  await runtime?.close();
  await chroma?.process.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('recall with a dependency down', () => {
  it('returns a structured error plus what BM25 found when Chroma is stopped, and never throws', async () => {
    const user = 'degraded-user';
    const [id] = await seedMemories(runtime.deps, user, [{ text: '我对花生过敏，吃了会起疹子', at: new Date() }, { text: 'I live in Lisbon', at: new Date() }]);
    const healthy = await runtime.createApi();
    const before = await healthy.inject({ method: 'GET', url: '/healthz' });
    expect(before.json().checks.chroma.status).toBe('ok');

    await chroma.process.stop();

    const { recall } = await import('../src/recall/recall');
    const result = await recall(runtime.deps, user, '花生过敏');
    expect(result.error?.code).toBe('vectorStoreUnavailable');
    expect(result.error?.routes).toContain('ann');
    expect(result.routes.find((r) => r.route === 'ann')?.ok).toBe(false);
    expect(result.routes.find((r) => r.route === 'bm25')?.ok).toBe(true);
    expect(result.memories.map((m) => m.id)).toContain(id);
    expect(result.context.userPrefix).toContain('花生');

    const health = await healthy.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(503);
    expect(health.json().checks.chroma.status).toBe('down');
    await healthy.close();
  });
});
