/**
 * Generated attacks on every regular expression of src/core (issue #20): recheck looks for an
 * input on which the pattern's backtracking grows faster than linearly — over all start
 * positions, as a search or a g-flag replace runs it — and the test fails on any such pattern.
 * The patterns are collected, not listed (test/support/core-patterns.ts), so a new rule is
 * covered the day it is written.
 */
import { check } from 'recheck';
import { beforeAll, describe, expect, it } from 'vitest';
import { capturePatterns, coreFiles, dedupe, type FoundPattern, importCore, literalPatterns } from './support/core-patterns';

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
  it('are collected, literals and built ones (the reminder rule tables among them)', () => {
    expect(patterns.length).toBeGreaterThan(200);
    expect(patterns.some((p) => p.where.includes('reminder-request.ts (runtime)') && p.source.includes('分钟|小时'))).toBe(true);
  });

  it('none backtracks super-linearly on a generated attack', async () => {
    const vulnerable: string[] = [];
    // recheck's native checker answers in parallel; a handful at a time keeps two cores usable.
    const queue = [...patterns];
    const worker = async (): Promise<void> => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        const result = await check(p.source, p.flags, { timeout: 20_000 });
        if (result.status === 'vulnerable') vulnerable.push(`${p.where} /${p.source}/${p.flags} — ${result.complexity.type}: ${result.attack.pattern}`);
        else if (result.status === 'unknown') vulnerable.push(`${p.where} /${p.source}/${p.flags} — unknown: ${result.error.kind}`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(vulnerable.sort()).toEqual([]);
  }, 600_000);
});
