import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { recallBody } from '../src/api/schemas';
import type { MemoryType as ClientMemoryType, RecallRequest as ClientRecallRequest } from '../src/client/index';
import { MEMORY_TYPES, type MemoryType } from '../src/core/types';
import { MEMORY_SEARCH_ROUTES } from '../src/mcp/backend';
import { ALL_ROUTES, type RecallRoute } from '../src/core/recall/routes';

/** The memory types the database accepts: the last `type IN (…)` CHECK on memories across the migrations, in order. */
function migrationMemoryTypes(): string[] {
  let found: string[] | undefined;
  for (const file of readdirSync('migrations').filter((f) => f.endsWith('.sql')).sort()) {
    const sql = readFileSync(join('migrations', file), 'utf8');
    for (const line of sql.split('\n')) {
      const at = line.indexOf('CHECK (type IN (');
      if (at < 0) continue;
      const list = line.slice(at + 'CHECK (type IN ('.length, line.indexOf(')', at + 'CHECK (type IN ('.length));
      found = list.split(',').map((s) => s.trim().replaceAll("'", ''));
    }
  }
  if (!found) throw new Error('no memories type CHECK in migrations/');
  return found;
}

describe('the one list of memory types (src/core/types.ts) and of recall routes (src/recall/recall.ts)', () => {
  it('is what the migration CHECK accepts: adding a type without its migration fails here', () => {
    expect([...migrationMemoryTypes()].sort()).toEqual([...MEMORY_TYPES].sort());
  });

  it('is the client package type (it cannot import the server; the compiler holds the copy equal)', () => {
    expectTypeOf<ClientMemoryType>().toEqualTypeOf<MemoryType>();
    expectTypeOf<NonNullable<ClientRecallRequest['routes']>[number]>().toEqualTypeOf<RecallRoute>();
  });

  it('is what the API schema accepts for routes and types', () => {
    const routes = recallBody.shape.routes.unwrap().element.options;
    expect([...routes].sort()).toEqual([...ALL_ROUTES].sort());
    expect([...recallBody.shape.types.unwrap().element.options].sort()).toEqual([...MEMORY_TYPES].sort());
  });

  it('gives MCP every memory route (all but the raw exchanges, which conversation_search serves)', () => {
    expect([...MEMORY_SEARCH_ROUTES].sort()).toEqual(ALL_ROUTES.filter((r) => r !== 'exchanges').sort());
  });
});
