import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
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

/** `npm run dev` in a process group of its own, as a terminal runs it, so a signal can go to all of it. */
function startDev(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null>; up: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/dev.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  let markUp: () => void = () => {};
  const up = new Promise<void>((r) => (markUp = r));
  const onData = (c: Buffer) => {
    output += c.toString();
    if (output.includes('jarvis-memory is up')) markUp();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => output, exited, up: Promise.race([up, exited.then(() => Promise.reject(new Error(`dev exited before it was up:\n${output}`)))]) };
}

/** Every process that has `dir` as its cwd or names it in its command line (checked here, not by the code under test). */
function processesOf(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cwd.startsWith(dir) || cmd.includes(dir)) found.push(`${entry} ${cmd.slice(0, 120)}`);
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

async function waitGone(dir: string, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesOf(dir);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('stopping npm run dev', () => {
  // dev starts its own PostgreSQL here (the shared stack's other servers stand in for the rest),
  // on a port and data directory of its own, in a Temporal namespace of its own.
  const dataDir = resolve(`.data/dev-stops-${process.pid}`);
  const pgData = resolve(dataDir, 'postgres');
  const env = async (): Promise<Record<string, string>> => {
    const stack = inject('stack');
    return {
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: `dev-stops-${process.pid}`,
      TEMPORAL_TASK_QUEUE: `dev-stops-${process.pid}`,
      CHROMA_URL: stack.chromaUrl,
      CHROMA_COLLECTION: `dev_stops_${process.pid}`,
      EMBEDDINGS_URL: stack.embeddingsUrl ?? '',
      DATABASE_URL: '',
      PG_PORT: String(await freePort()),
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    };
  };
  afterAll(async () => {
    for (const line of processesOf(dataDir)) process.kill(Number(line.split(' ')[0]), 'SIGKILL');
    await waitGone(dataDir, 5_000);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('Ctrl-C (SIGINT to the whole process group) exits 0 with no error or stack trace and leaves no process', { timeout: 240_000 }, async () => {
    const dev = startDev(await env());
    await dev.up;
    const postmaster = Number(readFileSync(resolve(pgData, 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(postmaster).toBeGreaterThan(0);
    process.kill(-dev.child.pid!, 'SIGINT');
    expect(await dev.exited).toBe(0);
    expect(dev.output()).not.toMatch(/Error/);
    expect(dev.output()).not.toMatch(/^\s+at /m);
    expect(await waitGone(dataDir, 5_000)).toEqual([]);
    expect(existsSync(resolve(pgData, 'postmaster.pid'))).toBe(false);
  });

  it('a dev killed with SIGKILL, its PostgreSQL too with a backend still busy, comes up again by itself', { timeout: 300_000 }, async () => {
    const vars = await env();
    const first = startDev(vars);
    await first.up;
    const postmaster = Number(readFileSync(resolve(pgData, 'postmaster.pid'), 'utf8').split('\n')[0]);
    // A backend busy in the executor does not notice that its postmaster is gone.
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${vars.PG_PORT}/jarvis` });
    await client.connect();
    client.on('error', () => {});
    void client.query('SELECT count(*) FROM generate_series(1::bigint, 100000000000::bigint)').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    process.kill(-first.child.pid!, 'SIGKILL');
    process.kill(postmaster, 'SIGKILL');
    await first.exited;
    expect(processesOf(pgData).length).toBeGreaterThan(0);

    const second = startDev(vars);
    await second.up;
    expect(second.output()).toContain('left behind');
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    process.kill(-second.child.pid!, 'SIGINT');
    expect(await second.exited).toBe(0);
    expect(await waitGone(dataDir, 5_000)).toEqual([]);
  });
});
