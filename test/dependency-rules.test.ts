import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const config = require('../.dependency-cruiser.cjs') as { forbidden: IForbiddenRuleType[]; knownViolations: Record<string, [string, string][]>; domainOf: Record<string, string> };

async function violations(baseDir: string, roots: string[]): Promise<string[]> {
  const { output } = await cruise(roots, {
    baseDir,
    validate: true,
    ruleSet: { forbidden: config.forbidden },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/client/dist/' },
  }, { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] });
  const result = output as ICruiseResult;
  return [...new Set(result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`))].sort();
}

/** A small tree shaped like the house, with one deliberately wrong import per rule and some right ones. */
const fixture: Record<string, string> = {
  'src/core/types.ts': 'export type Id = string;\n',
  'src/core/text/strip.ts': "import type { Id } from '../types';\nexport const strip = (s: Id): string => s.trim();\n",
  // wrong: the kernel reaches an adapter
  'src/core/clock.ts': "import { jieba } from '../adapters/text/jieba';\nexport const now = jieba;\n",
  'src/adapters/text/jieba.ts': 'export const jieba = 1;\n',
  // right: a domain imports the kernel; wrong: a domain imports another capability's domain (one-way
  // allows it: recall is above persona, so only the domain rule fires)
  'src/core/recall/rank.ts': "import { strip } from '../text/strip';\nimport { profile } from '../persona/profile';\nexport const rank = [strip, profile];\n",
  'src/core/persona/profile.ts': 'export const profile = 1;\n',
  // wrong: a use case imports an adapter, and segments words through the adapter
  'src/memory/writer.ts': "import { jieba } from '../adapters/text/jieba';\nexport const write = jieba;\n",
  // wrong: a use case reaches PostgreSQL itself (a type-only import counts)
  'src/proactive/listener.ts': "import type pg from 'pg';\nexport type Conn = pg.PoolClient;\n",
  // right: the adapter holds the pg import
  'src/adapters/postgres/feed.ts': "import pg from 'pg';\nexport const feed = pg;\n",
  // right: a use case segments through the shared binding of the port
  'src/shared/segmentation.ts': "export { jieba as segmenter } from '../adapters/text/jieba';\n",
  'src/conversation/episodes.ts': "import { segmenter } from '../shared/segmentation';\nexport const episodes = segmenter;\n",
  // right: recall (high) imports memory (low); wrong: account (lowest) imports recall
  'src/recall/recall.ts': "import { write } from '../memory/writer';\nexport const recall = write;\n",
  'src/account/settings.ts': "import { recall } from '../recall/recall';\nexport const settings = recall;\n",
  // wrong: a starter imports the workflow bundle; right: search attributes and its contract
  'src/proactive/reminders.ts':
    "import { reminderWorkflow } from '../../workflows';\nimport { key } from '../../workflows/shared/search-attributes';\nimport { names } from './contract';\nexport const start = [reminderWorkflow, key, names];\n",
  'src/proactive/contract.ts': "export const names = { reminder: 'reminderWorkflow' };\n",
  'workflows/shared/search-attributes.ts': "export const key = 'k';\n",
  'workflows/index.ts': "export { reminderWorkflow } from './proactive/reminder';\nexport { storeWorkflow } from './memory/store';\n",
  // right: a workflow types its own activities and takes its contract
  'workflows/proactive/reminder.ts': "import type { acts } from '../../activities/proactive/proactive';\nimport { names } from '../../src/proactive/contract';\nexport const reminderWorkflow = (a: typeof acts) => [a, names];\n",
  'activities/proactive/proactive.ts': 'export const acts = 1;\n',
  // wrong: a workflow imports activities as a value, the whole factory, and a use case
  'workflows/memory/store.ts': "import { all } from '../../activities/index';\nimport { write } from '../../src/memory/writer';\nexport const storeWorkflow = [all, write];\n",
  'activities/index.ts': 'export const all = 1;\n',
  // wrong: shared workflow code types the whole activity factory (only the barrel rule covers workflows/shared)
  'workflows/shared/activity-types.ts': "import type { all } from '../../activities';\nexport type All = typeof all;\n",
  // wrong: an import circle of type-only imports (reported once, at the edge that closes it)
  'src/persona/a.ts': "import type { B } from './b';\nexport type A = { b?: B };\n",
  'src/persona/b.ts': "import type { A } from './a';\nexport type B = { a?: A };\n",
};

const dir = mkdtempSync(join(tmpdir(), 'depcruise-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the dependency rules (.dependency-cruiser.cjs)', () => {
  it('fire on each deliberately wrong import of a fixture, and only on those', async () => {
    for (const [file, text] of Object.entries(fixture)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    expect(await violations(dir, ['src', 'workflows', 'activities'])).toEqual(
      [
        'kernel-imports-only-kernel: src/core/clock.ts → src/adapters/text/jieba.ts',
        'core-is-pure: src/core/clock.ts → src/adapters/text/jieba.ts',
        'domain-imports-only-kernel-and-itself: src/core/recall/rank.ts → src/core/persona/profile.ts',
        'use-cases-never-import-adapters: src/memory/writer.ts → src/adapters/text/jieba.ts',
        'capabilities-segment-through-the-port: src/memory/writer.ts → src/adapters/text/jieba.ts',
        'capabilities-never-import-pg: src/proactive/listener.ts → pg',
        'capabilities-depend-one-way: src/account/settings.ts → src/recall/recall.ts',
        'starters-import-only-contracts: src/proactive/reminders.ts → workflows/index.ts',
        'workflows-import-activities-as-types: workflows/memory/store.ts → activities/index.ts',
        'workflows-import-only-their-own-activity-types: workflows/memory/store.ts → activities/index.ts',
        'workflows-never-import-the-activity-barrel: workflows/memory/store.ts → activities/index.ts',
        'workflows-never-import-the-activity-barrel: workflows/shared/activity-types.ts → activities/index.ts',
        'workflows-import-only-domain-contracts-and-activity-types: workflows/memory/store.ts → src/memory/writer.ts',
        'no-circular: src/persona/a.ts → src/persona/b.ts',
      ].sort(),
    );
  }, 120_000);

  it('cover every folder of src/core: the kernel (text, time, ports), or the domain of a capability (a new folder cannot slip past the domain rule)', () => {
    const folders = readdirSync('src/core', { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.filter((f) => !['text', 'time', 'ports'].includes(f) && !(f in config.domainOf))).toEqual([]);
  });

  it('list only exceptions that still exist: the repository breaks no rule, and every known violation is a real edge', async () => {
    const edges = new Set<string>();
    const { output } = await cruise(['src', 'workflows', 'activities'], { baseDir: process.cwd(), tsPreCompilationDeps: true, doNotFollow: { path: 'node_modules' }, exclude: { path: '^src/client/dist/' } }, { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] });
    for (const m of (output as ICruiseResult).modules) for (const d of m.dependencies) edges.add(`${m.source} → ${d.resolved}`);
    const stale = Object.values(config.knownViolations)
      .flat()
      .map(([from, to]) => `${from} → ${to}`)
      .filter((e) => !edges.has(e));
    expect(stale).toEqual([]);
    expect(await violations(process.cwd(), ['src', 'workflows', 'activities'])).toEqual([]);
  }, 300_000);
});
