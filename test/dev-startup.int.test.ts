import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config';
import { startStack } from '../src/stack';
import { freePort } from '../src/stack/managed-process';
import { probes, StackStartError } from '../src/stack/readiness';

// Starting the service against dependencies that are not there: it must fail fast, name the
// dependency and the variable to fix, and print no stack trace — and call a dependency ready only
// when it answers its protocol.

const held: Server[] = [];
const sockets = new Set<Socket>();
afterAll(async () => {
  // close() waits for open connections, and probes that gave up may leave theirs half open.
  for (const socket of sockets) socket.destroy();
  for (const s of held) await new Promise((r) => s.close(r));
});

/** A port where something listens but speaks no protocol we know (it accepts and says nothing). */
async function silentListener(): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  held.push(server);
  return (server.address() as { port: number }).port;
}

function runDev(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/dev.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe('npm run dev against missing dependencies', () => {
  it('names TEMPORAL_ADDRESS in one line when nothing answers there, without a stack trace', async () => {
    const stack = inject('stack');
    const closed = await freePort();
    const res = await runDev({
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
      DATABASE_URL: stack.databaseUrl,
      CHROMA_URL: stack.chromaUrl,
      EMBEDDINGS_URL: stack.embeddingsUrl ?? '',
      DATA_DIR: `.data/dev-startup-${process.pid}`,
      LOG_LEVEL: 'warn',
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`\\[dev\\] cannot start: Temporal at 127\\.0\\.0\\.1:${closed} \\(TEMPORAL_ADDRESS\\) did not answer`));
    expect(res.stderr).not.toMatch(/^\s+at /m);
    expect(res.stderr).not.toMatch(/Failed to connect before the deadline\n\s+at/);
  });

  it('names every configured dependency that does not answer', async () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: `127.0.0.1:${await silentListener()}`,
      DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${await freePort()}/jarvis`,
      CHROMA_URL: `http://127.0.0.1:${await silentListener()}`,
      EMBEDDINGS_URL: `http://127.0.0.1:${await freePort()}/v1`,
      DATA_DIR: `.data/dev-startup-${process.pid}`,
    });
    const err = (await startStack(config, { readyTimeoutMs: 1500 }).catch((e: unknown) => e)) as StackStartError;
    expect(err).toBeInstanceOf(StackStartError);
    for (const variable of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'CHROMA_URL', 'EMBEDDINGS_URL']) expect(err.message).toContain(`(${variable})`);
    // The password never reaches a message.
    expect(err.message).not.toContain('secret');
  });

  it('refuses a fixed port that something else holds, naming the variable to change', async () => {
    const stack = inject('stack');
    const taken = await silentListener();
    const config = loadConfig({
      TEMPORAL_ADDRESS: stack.temporalAddress,
      DATABASE_URL: stack.databaseUrl,
      EMBEDDINGS_URL: stack.embeddingsUrl ?? '',
      CHROMA_PORT: String(taken),
      DATA_DIR: `.data/dev-startup-${process.pid}`,
    });
    const err = (await startStack(config).catch((e: unknown) => e)) as StackStartError;
    expect(err).toBeInstanceOf(StackStartError);
    expect(err.message).toContain(`port ${taken} for the local Chroma is already in use`);
    expect(err.message).toContain('CHROMA_PORT');
  });

  it('calls a dependency ready only when it answers its protocol, not when its port is open', async () => {
    const port = await silentListener();
    await expect(probes.chroma(`http://127.0.0.1:${port}`, 500)).rejects.toThrow();
    await expect(probes.temporal(`127.0.0.1:${port}`, 500)).rejects.toThrow();
    const stack = inject('stack');
    await expect(probes.temporal(stack.temporalAddress)).resolves.toBeUndefined();
    await expect(probes.postgres(stack.databaseUrl)).resolves.toBeUndefined();
    await expect(probes.chroma(stack.chromaUrl)).resolves.toBeUndefined();
  });
});
