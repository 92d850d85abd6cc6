/**
 * The project's lint config rejects a pattern that backtracks super-linearly under src/core and
 * accepts its linear rewrite (issue #20): the rule cannot be dropped from eslint.config.js unseen.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: 'eslint.config.js' });
// The path of a real file of src/core: the typed lint only parses files of the TS project.
const lint = async (code: string) => (await eslint.lintText(code, { filePath: 'src/core/text/strip.ts' }))[0]?.messages ?? [];

describe('lint config: regular expressions', () => {
  it('reports no-super-linear-backtracking on spaces around optional groups', async () => {
    const messages = await lint("export const re = /\\d\\s*a?\\s*b?\\s*c/u;\n");
    expect(messages.map((m) => m.ruleId)).toContain('regexp/no-super-linear-backtracking');
  }, 60_000);

  it('reports no-super-linear-move on an unguarded trailing run', async () => {
    const messages = await lint("export const strip = (s: string): string => s.replace(/\\s+x$/u, '');\n");
    expect(messages.map((m) => m.ruleId)).toContain('regexp/no-super-linear-move');
  }, 60_000);

  it('accepts the rewrites', async () => {
    const messages = await lint("export const re = /\\d(?:\\s*a)?(?:\\s*b)?\\s*c/u;\nexport const strip = (s: string): string => s.replace(/(?<!\\s)\\s+x$/u, '');\n");
    expect(messages.filter((m) => m.ruleId?.startsWith('regexp/no-super-linear'))).toEqual([]);
  }, 60_000);
});
