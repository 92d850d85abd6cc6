import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The code blocks docs/integrate.md marks with `<!-- example: name -->`, by name: the tests run what the page shows. */
export async function docExamples(): Promise<Map<string, string>> {
  const doc = await readFile(fileURLToPath(new URL('../../docs/integrate.md', import.meta.url)), 'utf8');
  return new Map([...doc.matchAll(/<!-- example: ([\w-]+) -->\n```\w+\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, m[2]!]));
}
