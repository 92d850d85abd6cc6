import { readFileSync } from 'node:fs';
import { z } from 'zod';

const message = z.object({ id: z.string(), role: z.enum(['user', 'assistant']), content: z.string(), at: z.string().optional() });
const conversation = z.object({ user: z.string(), id: z.string(), at: z.string(), messages: z.array(message) });
const check = z.object({
  user: z.string(),
  at: z.string(),
  query: z.string(),
  expect: z.array(z.array(z.string())).default([]),
  forbid: z.array(z.string()).default([]),
  expectMemories: z.number().int().optional(),
  tokenBudget: z.number().int().optional(),
});
export const scenarioSchema = z.object({ id: z.string(), tags: z.array(z.string()), conversations: z.array(conversation), checks: z.array(check) });
export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioCheck = z.infer<typeof check>;

/** Reads a JSONL scenario file (format: test/fixtures/eval/README.md). */
export function loadScenarios(path: string): Scenario[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const parsed = scenarioSchema.safeParse(JSON.parse(line));
      if (!parsed.success) throw new Error(`${path}:${i + 1}: ${parsed.error.message}`);
      return parsed.data;
    });
}

/** Substring match as the eval README says: case-insensitive for Latin letters only. */
export function contains(haystack: string, needle: string): boolean {
  return haystack.toLowerCase().includes(needle.toLowerCase());
}
