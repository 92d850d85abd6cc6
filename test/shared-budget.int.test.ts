import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { assertSchemaCurrent, migrate, pendingMigrations, SchemaBehindError } from '../src/adapters/postgres/migrate';
import { ensureDatabase } from '../src/stack/local-postgres';

// Many processes, one budget (issue #22): two API processes — real child processes, each with its
// own memory — on one database spend one rate-limit budget between them. And a process told not
// to migrate refuses a schema behind its code, naming the missing migration.

const KEY = 'shared-budget-test-key';
const WRITES_PER_USER = 6;
const prefix = `t${randomBytes(4).toString('hex')}`;
const children: ChildProcess[] = [];

async function database(name: string): Promise<string> {
  const stack = inject('stack');
  const admin = new URL(stack.databaseUrl);
  admin.pathname = '/postgres';
  await ensureDatabase(admin.toString(), name);
  const url = new URL(stack.databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  return typeof address === 'object' && address ? address.port : 0;
}

/** `npm run api` as a child process, with its own output kept for the failure message. */
function startApi(databaseUrl: string, port: number): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const stack = inject('stack');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/api.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      CHROMA_URL: stack.chromaUrl,
      EMBEDDINGS_PROVIDER: 'hashing',
      PORT: String(port),
      HOST: '127.0.0.1',
      API_KEYS: `tenant-a:${KEY}`,
      CHROMA_COLLECTION: `mem_${prefix}`,
      TEMPORAL_TASK_QUEUE: `q-${prefix}`,
      LOG_LEVEL: 'warn',
      MIGRATE_ON_START: 'false',
      PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE: 'false',
      RATE_LIMIT_WINDOW_SECONDS: '600',
      RATE_LIMIT_WRITES_PER_USER: String(WRITES_PER_USER),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

async function listening(port: number, api: ReturnType<typeof startApi>): Promise<void> {
  const deadline = Date.now() + 120_000;
  let exited = false;
  void api.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`API on ${port} did not start:\n${api.output()}`);
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
});

describe('two API processes, one budget', () => {
  let ports: number[] = [];
  beforeAll(async () => {
    const url = await database(`test_${prefix}`);
    await migrate(url);
    ports = [await freePort(), await freePort()];
    const apis = ports.map((port) => startApi(url, port));
    await Promise.all(ports.map((port, i) => listening(port, apis[i]!)));
  }, 180_000);

  it('lets exactly one writes budget through across both processes', async () => {
    const user = `u-${randomUUID()}`;
    const put = (port: number) =>
      fetch(`http://127.0.0.1:${port}/v1/users/${user}/settings`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ timezone: 'UTC' }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { error?: { code: string } } }));
    // The first write creates the user; then the rest, concurrently, alternating between processes.
    const first = await put(ports[0]!);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const rest = await Promise.all(Array.from({ length: 3 * WRITES_PER_USER }, (_, i) => put(ports[i % 2]!)));
    const statuses = [first, ...rest].map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(WRITES_PER_USER);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * WRITES_PER_USER + 1);
    expect(rest.filter((r) => r.status === 429).every((r) => r.body.error?.code === 'rate_limited')).toBe(true);
    // Each process refused some: neither counted alone (it would have let 6 through by itself).
    for (const port of ports) expect(rest.filter((r, i) => ports[i % 2] === port && r.status === 429).length).toBeGreaterThan(0);
  }, 60_000);
});

describe('a process that does not migrate', () => {
  it('refuses a schema behind its code, naming the missing migration', async () => {
    const url = await database(`test_${prefix}_behind`);
    await migrate(url);
    const newest = (await pendingMigrationsAfterRemovingNewest(url))!;
    await expect(assertSchemaCurrent(url)).rejects.toThrow(SchemaBehindError);
    await expect(assertSchemaCurrent(url)).rejects.toThrow(newest);

    const api = startApi(url, await freePort());
    const code = await api.exited;
    expect(code).toBe(1);
    expect(api.output()).toContain('[api] cannot start');
    expect(api.output()).toContain(newest);
    expect(api.output()).toContain('npm run migrate');
  }, 120_000);
});

/** Marks the newest migration as not applied (its table stays: only the record of it goes). */
async function pendingMigrationsAfterRemovingNewest(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('DELETE FROM pgmigrations WHERE id = (SELECT max(id) FROM pgmigrations) RETURNING name');
    expect(await pendingMigrations(url)).toEqual([rows[0]!.name]);
    return rows[0]?.name;
  } finally {
    await client.end();
  }
}
