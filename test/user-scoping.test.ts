import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// A static guard for "no code path searches without a user filter": every SQL statement in the
// adapters that touches a per-user table must mention user_id, unless it says why not with an
// `-- all-users:` comment (e.g. the nightly sweep over every user's memories, by design).
const USER_TABLES = /\b(memories|memory_terms|memory_events|messages|message_terms|conversations|entities|memory_entities|relations|users|user_index_stats|vector_outbox|episodes|episode_terms|reminders|notifications|digests)\b/;

function sqlStatements(source: string): string[] {
  const literals = [...source.matchAll(/`([^`]*)`|'((?:[^'\\\n]|\\.)*)'/g)].map((m) => m[1] ?? m[2] ?? '');
  return literals.filter((s) => /\b(SELECT|UPDATE|DELETE|INSERT)\b/.test(s));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('user scoping', () => {
  const files = [...filesUnder('src/adapters'), ...filesUnder('src/services'), ...filesUnder('src/api'), ...filesUnder('activities')];

  it('finds SQL to check', () => {
    expect(files.flatMap((f) => sqlStatements(readFileSync(f, 'utf8'))).length).toBeGreaterThan(20);
  });

  for (const file of files) {
    it(`${file}: every statement on a per-user table filters or writes user_id`, () => {
      for (const sql of sqlStatements(readFileSync(file, 'utf8'))) {
        if (!USER_TABLES.test(sql)) continue;
        if (/--\s*all-users:/.test(sql)) continue;
        // Joins through a primary key of a row already scoped by user (e.g. memory_entities by memory_id
        // inside a statement that also names user_id) are covered by the user_id check itself.
        expect(sql, `${file}: ${sql.replace(/\s+/g, ' ').slice(0, 160)}`).toMatch(/user_id|pg_advisory|FROM pg_|information_schema/);
      }
    });
  }

  it('the Chroma adapter filters every read and delete by user_id', () => {
    const source = readFileSync('src/adapters/chroma/chroma-vector-index.ts', 'utf8');
    const calls = [...source.matchAll(/this\.collection\.(query|get|delete)\(([^;]*)/g)];
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call[0]).toMatch(/where/);
    expect(source).toMatch(/user_id: userId/);
  });
});
