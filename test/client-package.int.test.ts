import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryClient } from '../src/client/index';
import { docExamples } from './support/doc-examples';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

/**
 * `@jarvis-memory/client` as a user gets it: built and packed from src/client, installed from the
 * tarball into a scratch project with no registry, the example of docs/integrate.md type-checked
 * there and run against the real API — and the page's curl examples run as written.
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLIENT = join(ROOT, 'src/client');
const MODULES = realpathSync(join(ROOT, 'node_modules'));
const TSC = join(MODULES, 'typescript/bin/tsc');
const TSX = join(MODULES, 'tsx/dist/cli.mjs');

let ctx: TestContext;
let work: string;
let scratch: string;
let packed: { filename: string; files: { path: string }[] };
let examples: Map<string, string>;

beforeAll(async () => {
  examples = await docExamples();
  ctx = await createTestContext();
  work = await mkdtemp(join(tmpdir(), 'jm-client-'));
  scratch = join(work, 'app');
  await mkdir(scratch);
  // The package's own build, then the tarball exactly as `npm pack` makes it.
  await run('npm', ['run', '--silent', 'build'], { cwd: CLIENT });
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: CLIENT });
  packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
  await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch-app', version: '1.0.0', private: true, type: 'module' }, null, 2));
  await writeFile(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], strict: true, noEmit: true, skipLibCheck: true }, include: ['*.ts'] }, null, 2),
  );
  // No registry: the package has no dependencies, and its optional peer is not installed by npm.
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(work, packed.filename)], { cwd: scratch });
  // The application's own copies of the optional peer (for the retriever) and of Node's types.
  for (const dep of ['@langchain/core', '@types/node']) {
    await mkdir(join(scratch, 'node_modules', dep, '..'), { recursive: true });
    await symlink(join(MODULES, dep), join(scratch, 'node_modules', dep), 'dir');
  }
  await writeFile(join(scratch, 'example.ts'), examples.get('client')!);
});

afterAll(async () => {
  await ctx?.close();
  if (work) await rm(work, { recursive: true, force: true });
  // The build's output is not the checkout's: left behind, it would shadow the sources for anything
  // that imports the client's folder (its package.json points at dist) until the next build.
  await rm(join(CLIENT, 'dist'), { recursive: true, force: true });
});

describe('@jarvis-memory/client, packed and installed', () => {
  it('packs the built client only: declarations and ES modules, no server code', async () => {
    const files = packed.files.map((f) => f.path).sort();
    expect(files).toEqual(
      ['package.json', ...['generated-memory-types', 'index', 'langchain-retriever', 'proactive-types', 'temporal-contract', 'views'].flatMap((n) => [`dist/${n}.d.ts`, `dist/${n}.js`])].sort(),
    );
    const installed = join(scratch, 'node_modules/@jarvis-memory/client/dist');
    for (const file of await readdir(installed)) {
      const source = await readFile(join(installed, file), 'utf8');
      const imports = [...source.matchAll(/(?:from|import)\s*(?:\(\s*)?['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      for (const spec of imports) expect(spec, `${file} imports ${spec}`).toMatch(/^(\.\/[\w-]+\.js|@langchain\/core\/[\w/]+)$/);
    }
    const manifest = JSON.parse(await readFile(join(scratch, 'node_modules/@jarvis-memory/client/package.json'), 'utf8'));
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependenciesMeta['@langchain/core'].optional).toBe(true);
  });

  it('type-checks the documented example in a project that installed the tarball', async () => {
    const result = await run('node', [TSC, '-p', scratch]).catch((err: { stdout: string; stderr: string }) => err);
    expect('stdout' in result ? result.stdout + result.stderr : '').toBe('');
  });

  it('catches a wrong call: the types are real', async () => {
    await writeFile(join(scratch, 'wrong.ts'), "import { MemoryClient } from '@jarvis-memory/client';\nawait new MemoryClient({ baseUrl: 'x', apiKey: 'k' }).recall('alice', { query: 42 });\n");
    try {
      const failed = await run('node', [TSC, '-p', scratch]).then(
        () => '',
        (err: { stdout: string }) => err.stdout,
      );
      expect(failed).toMatch(/wrong\.ts.*error TS2322/);
    } finally {
      await rm(join(scratch, 'wrong.ts'));
    }
  });

  it('runs the documented example against the API, through the installed package', async () => {
    const { stdout } = await run('node', [TSX, 'example.ts'], { cwd: scratch, env: { ...process.env, MEMORY_URL: ctx.baseUrl, MEMORY_KEY: TEST_KEY, MEMORY_USER: `${ctx.prefix}-pkg` } });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(out).toMatchObject({ decision: 'create', userPrefix: true, workflowKind: 'conversation', pageLink: true, exportedMemories: 1 });
    expect(out.recalled).toContain('I am allergic to peanuts');
    expect(out.documents).toContain('I am allergic to peanuts');
    expect(out.past).toContain('We are planning a trip to Lisbon in May');
    expect(out.temporalQuery).toMatch(/^MemoryUserId = 'tenant-a:[a-z2-7]+' AND WorkflowType = 'conversationWorkflow'$/);
  });
});

describe('the client’s privacy calls', () => {
  it('streams the export and purges the user', async () => {
    const memory = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
    const userId = `${ctx.prefix}-gone`;
    await memory.createMemory(userId, { text: 'I live in Porto', type: 'fact' });
    const stream = await memory.exportUserStream(userId);
    const exported = JSON.parse(await new Response(stream).text());
    expect(exported.memories.map((m: { text: string }) => m.text)).toEqual(['I live in Porto']);
    const purged = await memory.purgeUser(userId, { wait: true });
    expect(purged.result?.counts.dataKeyDestroyed).toBe(true);
    expect((await memory.listMemories(userId)).memories).toEqual([]);
  });
});

describe('docs/integrate.md curl examples', () => {
  for (const name of ['http-write', 'http-read', 'http-privacy', 'mcp-http']) {
    it(`${name} runs as written`, async () => {
      // As written, except that a refused request fails the script and each answer ends its line.
      const script = examples.get(name)!.replaceAll('curl -s ', "curl -sS --fail-with-body -w '\\n' ");
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: work, env: { ...process.env, MEMORY_URL: ctx.baseUrl, MEMORY_KEY: TEST_KEY } });
      for (const line of stdout.split('\n').filter((l) => l.trim() !== '')) {
        const body = JSON.parse(line);
        expect(body.error, line).toBeUndefined();
      }
      if (name === 'http-read') expect(stdout).toContain('allergic to peanuts');
      if (name === 'mcp-http') expect(JSON.parse(stdout).result.structuredContent.memories[0].text).toBe('I am allergic to peanuts');
    });
  }
});
