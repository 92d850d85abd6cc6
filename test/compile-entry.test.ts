import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BUNDLED_PACKAGES, compileEntry, joinsPackage } from '../src/cli/compile-entry';

// Which packages the compiled worker entry joins (src/cli/compile-entry.ts): the listed pure-JS
// ones and what they need, never a package that would then exist twice in the process.
describe('joinsPackage', () => {
  const fromSources = { insideJoinedPackage: false, ownDependency: true, sharedWithRoot: true };
  it('joins the listed packages from our sources, and nothing else', () => {
    expect(joinsPackage('chrono-node', fromSources)).toBe(true);
    expect(joinsPackage('@langchain/core', fromSources)).toBe(true);
    for (const outside of ['@temporalio/worker', '@temporalio/client', 'zod', 'piscina', 'pino', 'node-pg-migrate', '@node-rs/jieba', 'fastify', 'pg']) {
      expect(joinsPackage(outside, fromSources)).toBe(false);
      expect(BUNDLED_PACKAGES).not.toContain(outside);
    }
  });

  it('brings what a joined package needs, except one of our own dependencies found where ours is', () => {
    expect(joinsPackage('langsmith', { insideJoinedPackage: true, ownDependency: false, sharedWithRoot: true })).toBe(true);
    // zod imported by @langchain/core: the same instance our schemas come from, left outside.
    expect(joinsPackage('zod', { insideJoinedPackage: true, ownDependency: true, sharedWithRoot: true })).toBe(false);
    // A private, nested copy (another version) was never shared: it comes along.
    expect(joinsPackage('zod', { insideJoinedPackage: true, ownDependency: true, sharedWithRoot: false })).toBe(true);
  });
});

describe('compiled entry with joined packages', () => {
  it('runs under plain node with chrono-node and luxon inside it and zod and Temporal outside', { timeout: 60_000 }, async () => {
    await mkdir(join(process.cwd(), 'test-artifacts'), { recursive: true });
    const dir = await mkdtemp(join(process.cwd(), 'test-artifacts', 'join-'));
    try {
      await writeFile(
        join(dir, 'entry.ts'),
        [
          "import * as chrono from 'chrono-node';",
          "import { DateTime } from 'luxon';",
          "import { z } from 'zod';",
          "import { msToNumber } from '@temporalio/common/lib/time';",
          "const when = chrono.parseDate('next friday 9am', new Date('2026-06-10T00:00:00Z'));",
          "console.log(JSON.stringify({ day: DateTime.fromJSDate(when!, { zone: 'utc' }).weekday, n: z.number().parse(3), ms: msToNumber('2s') }));",
        ].join('\n'),
      );
      await compileEntry(join(dir, 'entry.ts'), join(dir, 'out'), 'f'.repeat(64));
      const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'out/entry.mjs')]);
      expect(JSON.parse(stdout)).toEqual({ day: 5, n: 3, ms: 2000 });
      const files = [join(dir, 'out/entry.mjs'), ...(await readdir(join(dir, 'out/chunks')).catch(() => [])).filter((f) => f.endsWith('.mjs')).map((f) => join(dir, 'out/chunks', f))];
      const code = (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
      const imported = [...code.matchAll(/^import\s[^;]*?from\s*"([^"]+)"/gmu)].map((m) => m[1]);
      expect(imported).toContain('zod');
      expect(imported).toContain('@temporalio/common/lib/time.js');
      expect(imported).not.toContain('chrono-node');
      expect(imported).not.toContain('luxon');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
