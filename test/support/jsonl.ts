import { readFileSync } from 'node:fs';

/** The JSON objects of a JSON Lines file, one per non-blank line. */
export function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}
