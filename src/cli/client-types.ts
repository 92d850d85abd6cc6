import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MEMORY_TYPES } from '../core/memory-types';

/**
 * `npm run gen:client-types`: writes the client package's list of memory types from the one
 * definition (src/core/memory-types.ts). The package is built and shipped on its own and cannot
 * import the server, so it gets a generated file; `--check` only compares, and
 * test/memory-type-list.test.ts does the same, so the package cannot fall behind.
 */

export const CLIENT_MEMORY_TYPES_PATH = fileURLToPath(new URL('../client/generated-memory-types.ts', import.meta.url));

export function renderClientMemoryTypes(): string {
  return [
    '// Generated from src/core/memory-types.ts by `npm run gen:client-types`: do not edit.',
    '',
    '/** The kinds of memory the service keeps. */',
    `export type MemoryType = ${MEMORY_TYPES.map((t) => `'${t}'`).join(' | ')};`,
    '',
  ].join('\n');
}

function main(): void {
  const rendered = renderClientMemoryTypes();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(CLIENT_MEMORY_TYPES_PATH, 'utf8');
    } catch {
      // Missing counts as out of date.
    }
    if (current !== rendered) {
      console.error('src/client/generated-memory-types.ts is out of date: run `npm run gen:client-types`');
      process.exit(1);
    }
    console.log('src/client/generated-memory-types.ts is up to date');
    return;
  }
  writeFileSync(CLIENT_MEMORY_TYPES_PATH, rendered);
  console.log(`wrote ${CLIENT_MEMORY_TYPES_PATH}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
