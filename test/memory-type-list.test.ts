import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import Fastify from 'fastify';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { EXTRACTION_SYSTEM_PROMPT } from '../src/adapters/llm/llm-extractor';
import { PAGE_VOCABULARY_PATH, pageVocabularyRoutes } from '../src/api/routes/page-vocabulary';
import { recallBody } from '../src/api/schemas';
import { CLIENT_MEMORY_TYPES_PATH, renderClientMemoryTypes } from '../src/cli/client-types';
import type { MemoryType as ClientMemoryType, RecallRequest as ClientRecallRequest } from '../src/client/index';
import { BASE_IMPORTANCE } from '../src/core/extraction/match';
import { DEFAULT_EXPIRY_DAYS } from '../src/core/decay';
import { MEMORY_TYPE_DEFINITIONS, memoryTypePromptLines } from '../src/core/memory-types';
import { buildTemplatePersona } from '../src/core/persona/profile';
import { TYPE_WEIGHTS } from '../src/core/recall/rank';
import { MEMORY_TYPES, type MemoryType } from '../src/core/types';
import { MEMORY_SEARCH_ROUTES, type MemoryToolBackend } from '../src/mcp/backend';
import { createMemoryMcpServer } from '../src/mcp/tools';
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

describe('the one list of memory types (src/core/memory-types.ts) and of recall routes (src/core/recall/routes.ts)', () => {
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

/** Where a memory type's key may be spelled out next to others: the definition and what is generated from it. */
const DEFINITION_FILES = new Set(['src/core/memory-types.ts', 'src/client/generated-memory-types.ts']);
/**
 * A copy of the list: a per-type table (this many distinct types as object keys within a window of
 * this many lines) or a list (this many as string literals on one line). Rules and prototypes that
 * yield one type each, or query cues naming a few, are not copies.
 */
const WINDOW_LINES = 12;
const COPY_AT = 5;

/** Code lines without comments (a comment may name the types, as rank.ts's order of priority does). */
function codeLines(text: string): string[] {
  let inBlock = false;
  return text.split('\n').map((line) => {
    let out = '';
    let i = 0;
    while (i < line.length) {
      if (inBlock) {
        const end = line.indexOf('*/', i);
        if (end < 0) return out;
        inBlock = false;
        i = end + 2;
      } else if (line.startsWith('/*', i)) {
        inBlock = true;
        i += 2;
      } else if (line.startsWith('//', i) && !/:$/.test(line.slice(0, i))) {
        return out;
      } else {
        out += line[i];
        i += 1;
      }
    }
    return out;
  });
}

/** Distinct memory types a line names as object keys (`goal:`), and as string literals (`'goal'`). */
function typesNamed(line: string): { keys: Set<MemoryType>; strings: Set<MemoryType> } {
  const keys = new Set<MemoryType>();
  const strings = new Set<MemoryType>();
  for (const type of MEMORY_TYPES) {
    if (new RegExp(`(?:^|[\\s{,])['"]?${type}['"]?\\s*:`, 'u').test(line)) keys.add(type);
    if (new RegExp(`['"\`]${type}['"\`]`, 'u').test(line)) strings.add(type);
  }
  return { keys, strings };
}

/** Places outside the definition that spell out (most of) the list themselves. */
function copiesOfTheList(files: readonly string[]): string[] {
  const copies: string[] = [];
  for (const file of files) {
    if (DEFINITION_FILES.has(file)) continue;
    const lines = codeLines(readFileSync(file, 'utf8')).map(typesNamed);
    for (let start = 0; start < lines.length; start++) {
      const here = lines[start]!;
      if (here.keys.size === 0 && here.strings.size < COPY_AT) continue;
      const keys = new Set<MemoryType>();
      for (const line of lines.slice(start, start + WINDOW_LINES)) for (const t of line.keys) keys.add(t);
      if (keys.size >= COPY_AT || here.strings.size >= COPY_AT) {
        copies.push(`${file}:${start + 1}`);
        start += WINDOW_LINES - 1;
      }
    }
  }
  return copies;
}

function sources(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'src', 'workflows', 'activities', 'web'], { encoding: 'utf8' });
  return listed.split('\n').filter((f) => /\.(?:ts|js|html)$/.test(f));
}

describe('every place that uses the memory types derives them from src/core/memory-types.ts', () => {
  it('no source file keeps its own copy of the list or of a per-type table', () => {
    expect(copiesOfTheList(sources())).toEqual([]);
  });

  it('would catch a copy: the tables and lists as they were before the definition are found', () => {
    const dir = 'test/fixtures/memory-type-copies';
    expect(copiesOfTheList([`${dir}/rank-table.ts.txt`, `${dir}/page-labels.js.txt`, `${dir}/client-union.ts.txt`])).toEqual([
      `${dir}/rank-table.ts.txt:3`,
      `${dir}/page-labels.js.txt:3`,
      `${dir}/client-union.ts.txt:2`,
    ]);
  });

  it('derives the ranking, extraction and lifecycle tables from the definition', () => {
    for (const type of MEMORY_TYPES) {
      const d = MEMORY_TYPE_DEFINITIONS[type];
      expect([type, TYPE_WEIGHTS[type], BASE_IMPORTANCE[type], DEFAULT_EXPIRY_DAYS[type]]).toEqual([type, d.priority, d.baseImportance, d.expiryDays]);
    }
  });

  it("heads the profile's lines with each type's profile label", () => {
    const now = new Date('2026-03-01T00:00:00Z');
    const said = {
      zh: { fact: '我在杭州做后端开发', preference: '我喜欢周末去爬山', goal: '我想年底前跑完半程马拉松' },
      en: { fact: 'I work as a backend developer in Hangzhou', preference: 'I like hiking at weekends', goal: 'I want to run a half marathon by December' },
    };
    for (const lang of ['zh', 'en'] as const) {
      const memories = (['fact', 'preference', 'goal'] as const).map((type, i) => ({
        id: `m${i}`,
        text: said[lang][type],
        type,
        status: 'active' as const,
        scope: 'global' as const,
        importance: 0.5,
        createdAt: now,
        updatedAt: now,
        expiresAt: null,
        source: {},
        metadata: {},
      }));
      const profile = buildTemplatePersona(memories, { now, maxTokens: 500 });
      const sep = lang === 'zh' ? '：' : ': ';
      for (const type of ['fact', 'preference', 'goal'] as const) expect(profile?.text).toContain(`- ${MEMORY_TYPE_DEFINITIONS[type].profileLabel[lang]}${sep}${said[lang][type]}`);
    }
  });

  it("puts the list and each type's wording in the LLM extraction prompt", () => {
    expect(EXTRACTION_SYSTEM_PROMPT).toContain(`\n${memoryTypePromptLines()}\n`);
    expect(memoryTypePromptLines().split('\n')[0]).toBe(`- type: ${MEMORY_TYPES.join(' | ')}.`);
  });

  it('is the client package file generated from the definition (npm run gen:client-types)', () => {
    expect(readFileSync(CLIENT_MEMORY_TYPES_PATH, 'utf8')).toBe(renderClientMemoryTypes());
  });

  it('is what the MCP tools accept and describe', async () => {
    const server = createMemoryMcpServer({} as MemoryToolBackend);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'memory-type-list', version: '0' });
    await client.connect(clientSide);
    try {
      const { tools } = await client.listTools();
      const add = tools.find((t) => t.name === 'memory_add')!.inputSchema.properties!.type as { enum: string[]; description: string };
      expect(add.enum).toEqual(MEMORY_TYPES);
      expect(add.description).toContain(MEMORY_TYPES.join(' | '));
      const search = tools.find((t) => t.name === 'memory_search')!.inputSchema.properties!.types as { items: { enum: string[] } };
      expect(search.items.enum).toEqual(MEMORY_TYPES);
    } finally {
      await client.close();
    }
  });

  it("serves the page the types' names it shows (web/app.js keeps none)", async () => {
    const app = Fastify();
    await app.register(pageVocabularyRoutes);
    try {
      const res = await app.inject({ method: 'GET', url: PAGE_VOCABULARY_PATH });
      expect(res.statusCode).toBe(200);
      const body = res.json<{ types: string[]; words: Record<'zh' | 'en', Record<string, string>> }>();
      expect(body.types).toEqual(MEMORY_TYPES);
      for (const type of MEMORY_TYPES) {
        expect(body.words.zh[type]).toBe(MEMORY_TYPE_DEFINITIONS[type].label.zh);
        expect(body.words.en[type]).toBe(MEMORY_TYPE_DEFINITIONS[type].label.en);
      }
      // The page's own words come along: what it shows before and after sign-in.
      expect([body.words.zh.title, body.words.en.title]).toEqual(['Jarvis 记忆', 'Jarvis Memory']);
      expect(readFileSync('web/app.js', 'utf8')).toContain(PAGE_VOCABULARY_PATH);
    } finally {
      await app.close();
    }
  });
});
