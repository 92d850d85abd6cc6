/**
 * Generated attacks on every regular expression of src/core (issue #20): recheck looks for an
 * input on which the pattern's backtracking grows faster than linearly — over all start
 * positions, as a search or a g-flag replace runs it — and the test fails on any `vulnerable`
 * pattern. The patterns are collected, not listed (test/support/core-patterns.ts), so a rule
 * written tomorrow is checked the day it is written.
 *
 * recheck needs seconds for some of the 700-odd patterns on a loaded machine, so verdicts are
 * cached in test/fixtures/regex-safety.json, keyed by flags and source (and dropped whole when
 * the recheck version changes). A pattern not in the cache is checked live, so a new or edited
 * pattern is never taken on trust. Refresh the cache with
 *   REGEX_SAFETY_UPDATE=1 npx vitest run test/regex-safety.test.ts
 *
 * A pattern recheck cannot decide in its time budget (`unknown`: mostly long alternations of
 * words under the `i` flag, whose automaton grows past the limit) passes only when it is in
 * test/support/regex-allow.ts with the reason it is linear; test/fuzz-extractors.test.ts
 * measures the real run time of every entry point that uses them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { check, type Diagnostics, type Parameters } from 'recheck';
import { beforeAll, describe, expect, it } from 'vitest';
import { capturePatterns, coreFiles, dedupe, type FoundPattern, importCore, literalPatterns } from './support/core-patterns';
import { KNOWN_SUPER_LINEAR, REGEX_ALLOW } from './support/regex-allow';

const CACHE_FILE = join(import.meta.dirname, 'fixtures', 'regex-safety.json');
const RECHECK_VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'node_modules', 'recheck', 'package.json'), 'utf8')) as { version: string }).version;
const UPDATE = process.env.REGEX_SAFETY_UPDATE === '1';

/** First pass: recheck's own choice of checker, short. Most patterns are decided here in ms. */
const FIRST: Parameters = { timeout: 1500 };
/**
 * Second pass for what the first left unknown: the fuzz checker alone, with small generations
 * and a short attack budget, so a pattern is either attacked quickly or reported unknown.
 */
const SECOND: Parameters = {
  checker: 'fuzz',
  timeout: 3000,
  maxIteration: 3,
  maxInitialGenerationSize: 100,
  maxGenerationSize: 30,
  maxAttackStringSize: 30_000,
  attackLimit: 100_000,
  incubationTimeout: 50,
  recallTimeout: -1,
};

type Verdict = 'safe' | 'unknown' | 'vulnerable';
interface Cache {
  recheck: string;
  verdicts: Record<string, Verdict>;
}

const keyOf = (p: { source: string; flags: string }): string => `${p.flags}/${p.source}`;

function readCache(): Cache['verdicts'] {
  try {
    const cache = JSON.parse(readFileSync(CACHE_FILE, 'utf8')) as Cache;
    return cache.recheck === RECHECK_VERSION ? cache.verdicts : {};
  } catch {
    return {};
  }
}

async function verdictOf(p: FoundPattern): Promise<{ verdict: Verdict; detail: string }> {
  let result: Diagnostics = await check(p.source, p.flags, FIRST);
  if (result.status === 'unknown') result = await check(p.source, p.flags, SECOND);
  if (result.status === 'vulnerable') return { verdict: 'vulnerable', detail: `${result.complexity.type}, attack ${result.attack.pattern}` };
  if (result.status === 'unknown') return { verdict: 'unknown', detail: result.error.kind };
  return { verdict: 'safe', detail: result.complexity.type };
}

let patterns: FoundPattern[] = [];

beforeAll(async () => {
  const literals = coreFiles().flatMap(literalPatterns);
  const built = await capturePatterns(async () => {
    await importCore();
    const { ENTRY_POINTS } = await import('./support/core-entry-points');
    const sample = '提醒我明天下午3点开会。Remind me in 2 hours to call mom. ```json\n{"a":1}\n``` 他说："你好"';
    for (const run of Object.values(ENTRY_POINTS)) run(sample);
  });
  patterns = dedupe([...literals, ...built]);
}, 120_000);

describe('regular expressions of src/core', () => {
  it('are collected, literals and built ones (the reminder rule tables among them), ours only', () => {
    expect(patterns.length).toBeGreaterThan(200);
    expect(patterns.some((p) => p.where.includes('reminder-tokens.ts (runtime)') && p.source.includes('分钟|小时'))).toBe(true);
    // chrono's zh parsers build `[\s|,|，]*` patterns lazily, called from src/core: not ours.
    expect(patterns.some((p) => p.source.includes('[\\s|,|，]*'))).toBe(false);
  });

  it('none backtracks super-linearly on a generated attack; undecided ones are allow-listed with a reason', async () => {
    const cached = UPDATE ? {} : readCache();
    const verdicts: Cache['verdicts'] = {};
    const vulnerable: string[] = [];
    const unknown: string[] = [];
    const debtSeen = new Set<string>();
    const allowed = new Set(REGEX_ALLOW.map(keyOf));
    const debt = new Set(KNOWN_SUPER_LINEAR.map(keyOf));
    const report: { where: string; source: string; flags: string; verdict: Verdict; detail: string }[] = [];
    const queue = [...patterns];
    const worker = async (): Promise<void> => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        const key = keyOf(p);
        const hit = cached[key];
        const { verdict, detail } = hit ? { verdict: hit, detail: 'cached' } : await verdictOf(p);
        report.push({ where: p.where, source: p.source, flags: p.flags, verdict, detail });
        verdicts[key] = verdict;
        // A listed debt may come back unknown on a loaded machine instead of vulnerable: still debt.
        if (debt.has(key) && verdict !== 'safe') debtSeen.add(key);
        else if (verdict === 'vulnerable') vulnerable.push(`${p.where} /${p.source}/${p.flags} — ${detail}`);
        else if (verdict === 'unknown' && !allowed.has(key)) unknown.push(`${p.where} /${p.source}/${p.flags} — unknown (${detail}), not in test/support/regex-allow.ts`);
      }
    };
    // recheck's native agent answers several checks at once; two keep the shared cores usable.
    await Promise.all([worker(), worker()]);
    if (process.env.REGEX_SAFETY_REPORT) writeFileSync(process.env.REGEX_SAFETY_REPORT, JSON.stringify(report, null, 1));
    if (UPDATE) writeFileSync(CACHE_FILE, `${JSON.stringify({ recheck: RECHECK_VERSION, verdicts: Object.fromEntries(Object.entries(verdicts).sort()) }, null, 1)}\n`);
    expect(vulnerable.sort()).toEqual([]);
    expect(unknown.sort()).toEqual([]);
    // A listed debt that is no longer proven super-linear (rewritten, or gone) leaves the list.
    expect(KNOWN_SUPER_LINEAR.filter((d) => !debtSeen.has(keyOf(d)) && !UPDATE).map(keyOf)).toEqual([]);
  }, 900_000);

  it('allow-list entries are still in the code and each gives its reason', () => {
    const present = new Set(patterns.map(keyOf));
    const stale = [...REGEX_ALLOW, ...KNOWN_SUPER_LINEAR].filter((a) => !present.has(keyOf(a))).map(keyOf);
    expect(stale).toEqual([]);
    expect([...REGEX_ALLOW, ...KNOWN_SUPER_LINEAR].filter((a) => a.reason.trim().length < 20).map(keyOf)).toEqual([]);
  });
});
