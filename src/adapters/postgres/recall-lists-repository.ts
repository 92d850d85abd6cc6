import type { MemoryLists, MemoryListsInput, MemoryListsSource } from '../../core/recall/memory-lists';
import { termFrequencies } from '../../core/text/tokenize';
import type { PersonaLanguage } from '../../core/persona/profile';
import { bm25TopCtes } from './bm25-sql';
import { COLUMNS, rowToMemory, type MemoryRow } from './memory-repository';
import { recallPersonaColumns, recallPersonaOf, type RecallPersonaRow } from './persona-repository';
import type { Queryable } from './pool';

const MEMORY_COLUMNS = COLUMNS.split(',').map((c) => c.trim());
/** A branch that reads no memory fills the memory columns with NULLs (UNION ALL takes their types from the first branch). */
const NO_MEMORY = MEMORY_COLUMNS.map(() => 'NULL').join(', ');

type ListRow = MemoryRow & { list: 'important' | 'type' | 'instruction' | 'bm25' | 'persona' | 'scenes'; score: number | null; live: boolean; extra: unknown };

/**
 * What recall reads from PostgreSQL beside its searches, in one statement (issue #22: a few round
 * trips per recall): the same queries as `mostImportant`, `byTypes`, `byTypes(instruction,
 * global)` and `bm25` of the memory repository, the persona's `forRecall` and the scene block's
 * `get`, each its own parenthesised branch with its ORDER BY and LIMIT, glued by UNION ALL and
 * tagged. Each branch is planned on its own (the user_id/status/importance indexes, the BM25
 * CTEs of bm25-sql.ts whose shape holds whatever the statistics say, primary keys); a part not
 * asked for is switched off by its flag (BM25 by no terms), so it costs nothing. The BM25 hits
 * come with their memory rows (a primary-key join of the k hits), so recall does not load them again.
 */
export class PostgresRecallLists implements MemoryListsSource {
  constructor(private readonly db: Queryable) {}

  async memoryLists(input: MemoryListsInput): Promise<MemoryLists> {
    const { important, byTypes, instructions, bm25 } = input;
    const live = `status = 'active' AND (expires_at IS NULL OR expires_at > $4::timestamptz)`;
    const terms = bm25 ? [...termFrequencies(bm25.tokens).keys()] : [];
    const { rows } = await this.db.query<ListRow>(
      `WITH ${bm25TopCtes({ postings: 'memory_terms', stats: 'user_index_stats', df: 'memory_term_df' }, '$3')},
            bm25 AS MATERIALIZED (SELECT memory_id, score FROM top ORDER BY score DESC, memory_id LIMIT $3)
       (SELECT 'important' AS list, NULL::float8 AS score, true AS live, NULL::jsonb AS extra, ${COLUMNS} FROM memories
         WHERE $5::boolean AND user_id = $1 AND ${live} AND type <> 'instruction' AND importance >= $6
           AND ($7::text[] IS NULL OR type = ANY($7::text[]))
         ORDER BY importance DESC, updated_at DESC
         LIMIT $8)
       UNION ALL
       (SELECT 'type', NULL, true, NULL, ${COLUMNS} FROM memories
         WHERE $9::boolean AND user_id = $1 AND ${live} AND type = ANY($10::text[]) AND NOT pending
         ORDER BY importance DESC, updated_at DESC
         LIMIT $11)
       UNION ALL
       (SELECT 'instruction', NULL, true, NULL, ${COLUMNS} FROM memories
         WHERE $12::boolean AND user_id = $1 AND ${live} AND type = 'instruction' AND scope = 'global' AND NOT pending
         ORDER BY importance DESC, updated_at DESC
         LIMIT $13)
       UNION ALL
       (SELECT 'bm25', b.score, m.id IS NOT NULL, NULL, b.memory_id, ${MEMORY_COLUMNS.slice(1).map((c) => `m.${c}`).join(', ')}
          FROM bm25 b LEFT JOIN memories m ON m.id = b.memory_id AND m.user_id = $1 AND m.status = 'active'
                                AND (m.expires_at IS NULL OR m.expires_at > $4::timestamptz))
       UNION ALL
       (SELECT 'persona', NULL, true, to_jsonb(p), ${NO_MEMORY}
          FROM (SELECT ${recallPersonaColumns('x', '$4::timestamptz')} FROM user_profiles x WHERE $14::boolean AND x.user_id = $1) p)
       UNION ALL
       (SELECT 'scenes', NULL, true, jsonb_build_object('language', s.language, 'lines', s.lines), ${NO_MEMORY}
          FROM user_scenes s WHERE $15::boolean AND s.user_id = $1)`,
      [
        input.userId,
        terms,
        bm25?.k ?? 0,
        input.now,
        important !== undefined,
        important?.minImportance ?? 1,
        important?.types && important.types.length > 0 ? important.types : null,
        important?.k ?? 0,
        byTypes !== undefined && byTypes.types.length > 0,
        byTypes?.types ?? [],
        byTypes?.k ?? 0,
        instructions !== undefined,
        instructions?.k ?? 0,
        input.persona === true,
        input.scenes === true,
      ],
    );
    // UNION ALL keeps each parenthesised branch's order in practice, but SQL does not promise it across branches: re-sort per list.
    const of = (list: ListRow['list']) => rows.filter((r) => r.list === list).map(rowToMemory).sort((a, b) => b.importance - a.importance || b.updatedAt.getTime() - a.updatedAt.getTime());
    const hits = rows.filter((r) => r.list === 'bm25').sort((a, b) => b.score! - a.score! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const personaRow = rows.find((r) => r.list === 'persona')?.extra as RecallPersonaRow | undefined;
    const scenesRow = rows.find((r) => r.list === 'scenes')?.extra as { language: PersonaLanguage; lines: string[] } | undefined;
    const persona = personaRow ? recallPersonaOf(personaRow) : undefined;
    return {
      important: of('important').map((m) => m.id),
      byTypes: of('type'),
      instructions: of('instruction'),
      bm25: hits.map((r) => ({ id: r.id, score: r.score! })),
      memories: rows.filter((r) => r.live && ['important', 'type', 'instruction', 'bm25'].includes(r.list)).map(rowToMemory),
      ...(persona ? { persona } : {}),
      ...(scenesRow ? { scenes: { language: scenesRow.language, lines: scenesRow.lines } } : {}),
    };
  }
}
