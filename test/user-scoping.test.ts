import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userCollectionName } from '../src/adapters/chroma/user-collections';

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
  const files = [...filesUnder('src/adapters'), ...filesUnder('src/memory'), ...filesUnder('src/conversation'), ...filesUnder('src/recall'), ...filesUnder('src/proactive'), ...filesUnder('src/persona'), ...filesUnder('src/lifecycle'), ...filesUnder('src/privacy'), ...filesUnder('src/account'), ...filesUnder('src/shared'), ...filesUnder('src/api'), ...filesUnder('activities')];

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

  for (const file of ['src/adapters/chroma/chroma-vector-index.ts', 'src/adapters/chroma/chroma-episode-index.ts']) {
    it(`${file} reaches records only through the caller's own collection`, () => {
      const source = readFileSync(file, 'utf8');
      // nearestOwned (and its LangChain twin, through the store of that collection) queries the
      // collection it is handed and drops records of other owners.
      const calls = [...source.matchAll(/collection\.(query|get|delete|upsert)\(|nearestOwned(?:ThroughLangChain)?\((?:collection|this\.stores\.storeOf\(collection\)), userId/g)];
      expect(calls.length).toBeGreaterThan(0);
      // Every record operation sits in a callback handed the collection resolved from the userId.
      const scoped = [...source.matchAll(/this\.users\.with\(userId, \{[^}]*\}, (?:async )?\(collection\) =>/g)];
      expect(scoped.length).toBe(calls.length);
      expect(source).not.toMatch(/getCollection|getOrCreateCollection|listCollections/);
      expect(source).toMatch(/user_id: userId/);
    });
  }

  it('gives every user a distinct, valid collection name', () => {
    const users = ['alice', 'Alice', 'alice ', '张三', 'a'.repeat(500), 'user/../../etc', ''];
    const names = users.map((u) => userCollectionName('jarvis_memories', u));
    expect(new Set(names).size).toBe(users.length);
    for (const name of [...names, userCollectionName('x'.repeat(80), 'bob')]) {
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name).toMatch(/^[a-z0-9][\w.-]*[a-z0-9]$/i);
    }
    expect(userCollectionName('jarvis_memories', 'alice')).toBe(userCollectionName('jarvis_memories', 'alice'));
  });
});
