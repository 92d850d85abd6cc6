import { importantTypes, type Bm25WithMemories, type MemoryLists, type MemoryListsInput, type MemoryListsSource, type UserHistory } from '../../core/recall/memory-lists';
import { termFrequencies } from '../../core/text/tokenize';
import type { PersonaLanguage } from '../../core/persona/profile';
import type { Memory } from '../../core/types';
import { bm25TopCtes } from './bm25-sql';
import { COLUMNS, rowToMemory, type MemoryRow } from './memory-repository';
import { recallPersonaColumns, recallPersonaOf, type RecallPersonaRow } from './persona-repository';
import type { Queryable } from './pool';
import { bind, prepared } from './prepared';

const MEMORY_COLUMNS = COLUMNS.split(',').map((c) => c.trim());
/** A branch that reads no memory fills the memory columns with NULLs (UNION ALL takes their types from the first branch). */
export const NO_MEMORY = MEMORY_COLUMNS.map(() => 'NULL').join(', ');
/** A BM25 hit's memory columns from the lateral `m`, but its id, which the hit itself carries. */
const HIT_COLUMNS = MEMORY_COLUMNS.slice(1)
  .map((c) => `m.${c}`)
  .join(', ');

type ListRow = MemoryRow & { list: 'important' | 'type' | 'recent' | 'instruction' | 'persona' | 'scenes' | 'history'; extra: unknown };

const LIVE = `status = 'active' AND (expires_at IS NULL OR expires_at > $2::timestamptz)`;
/**
 * The parts of recall's short lists that are not memories, as UNION ALL branches tagged `persona`,
 * `scenes` and `history` (their data in `extra`, the memory columns NULL), each switched by the
 * SQL boolean given: shared with the working set's statement (working-set-repository.ts), which
 * reads them beside a user's changed memories (and asks for `moreNulls` after the memory columns).
 */
export function stablePrefixBranches(p: { user: string; now: string; persona: string; scenes: string; history: string; moreNulls?: number }): string {
  const nullRow = [NO_MEMORY, ...Array.from({ length: p.moreNulls ?? 0 }, () => 'NULL')].join(', ');
  return `(SELECT 'persona', to_jsonb(p), ${nullRow}
          FROM (SELECT ${recallPersonaColumns('x', p.now)} FROM user_profiles x WHERE ${p.persona} AND x.user_id = ${p.user}) p)
       UNION ALL
       (SELECT 'scenes', jsonb_build_object('language', s.language, 'lines', s.lines), ${nullRow}
          FROM user_scenes s WHERE ${p.scenes} AND s.user_id = ${p.user})
       UNION ALL
       -- Three index probes: a recall skips the routes over a store the user has nothing in.
       (SELECT 'history', jsonb_build_object(
                 'messages', EXISTS (SELECT 1 FROM messages WHERE user_id = ${p.user}),
                 'episodes', EXISTS (SELECT 1 FROM episodes WHERE user_id = ${p.user}),
                 'entities', EXISTS (SELECT 1 FROM entities WHERE user_id = ${p.user})), ${nullRow}
         WHERE ${p.history})`;
}

/** The persona, scene block and history of the rows {@link stablePrefixBranches} tagged (the tag in `part`). */
export function stablePrefixOf(rows: readonly { part: string; extra: unknown }[]): Pick<MemoryLists, 'persona' | 'scenes' | 'history'> {
  const personaRow = rows.find((r) => r.part === 'persona')?.extra as RecallPersonaRow | undefined;
  const scenesRow = rows.find((r) => r.part === 'scenes')?.extra as { language: PersonaLanguage; lines: string[] } | undefined;
  const persona = personaRow ? recallPersonaOf(personaRow) : undefined;
  const history = rows.find((r) => r.part === 'history')?.extra as UserHistory | undefined;
  return {
    ...(persona ? { persona } : {}),
    ...(scenesRow ? { scenes: { language: scenesRow.language, lines: scenesRow.lines } } : {}),
    ...(history ? { history } : {}),
  };
}

/** The memory columns of a row of `recall_top_by_type`. */
const M_COLUMNS = MEMORY_COLUMNS.map((c) => `m.${c}`).join(', ');
/** The short lists' statement (see {@link PostgresRecallLists}). */
const LISTS = prepared(
  `-- Each type's best k in index order, then the best k of those (migration 1797400000000): the
   -- same rows as one ordered range over the user's live memories, read in a way no statistics change.
   (SELECT 'important' AS list, NULL::jsonb AS extra, ${M_COLUMNS}
          FROM recall_top_by_type($1, $5::text[], $4::real, $2::timestamptz, false, $6) m
         WHERE $3::boolean
         ORDER BY m.importance DESC, m.updated_at DESC
         LIMIT $6)
       UNION ALL
       (SELECT 'type', NULL, ${M_COLUMNS}
          FROM recall_top_by_type($1, $8::text[], '-Infinity'::real, $2::timestamptz, true, $9) m
         WHERE $7::boolean
         ORDER BY m.importance DESC, m.updated_at DESC
         LIMIT $9)
       UNION ALL
       -- The recent route (migration 1797500000000): the first k of the (user, updated_at, importance) index.
       (SELECT 'recent', NULL, ${M_COLUMNS}
          FROM recall_recent($1, $16::text[], $17) m
         WHERE $15::boolean)
       UNION ALL
       (SELECT 'instruction', NULL, i.* FROM (
          -- Read by (user_id, status, type), then sorted: a user has few instructions. In
          -- importance order the planner walked every memory of a never-analyzed user (10k rows, 8 ms).
          SELECT ${COLUMNS} FROM memories
           WHERE $10::boolean AND user_id = $1 AND ${LIVE} AND type = 'instruction' AND scope = 'global' AND NOT pending
          OFFSET 0) i
         ORDER BY i.importance DESC, i.updated_at DESC
         LIMIT $11)
       UNION ALL
       ${stablePrefixBranches({ user: '$1', now: '$2::timestamptz', persona: '$12::boolean', scenes: '$13::boolean', history: '$14::boolean' })}`,
);
/**
 * Memory BM25 with its memories (see {@link PostgresRecallLists.bm25WithMemories}). Sent unnamed,
 * so planned with its values on every call: its generic plan probes the cut terms' postings through
 * the memory_id index instead of the primary key (4× the postings read, test/bm25-plans.int.test.ts).
 */
const BM25 = 
  `WITH ${bm25TopCtes({ postings: 'memory_terms', stats: 'user_index_stats', df: 'memory_term_df' }, '$3')},
            bm25 AS MATERIALIZED (SELECT memory_id, score FROM top ORDER BY score DESC, memory_id LIMIT $3)
       SELECT b.score, m.id IS NOT NULL AS live, b.memory_id AS id, ${HIT_COLUMNS}
         FROM bm25 b
         LEFT JOIN LATERAL (SELECT ${COLUMNS} FROM memories x WHERE x.id = b.memory_id OFFSET 0) m
           ON m.user_id = $1 AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > $4::timestamptz)
        ORDER BY b.score DESC, b.memory_id`;

/**
 * What recall reads from PostgreSQL beside its searches, in one statement (issue #22: a few round
 * trips per recall): the same queries as `mostImportant`, `byTypes`, `byTypes(instruction,
 * global)` of the memory repository, the persona's `forRecall` and the scene block's `get`, each
 * its own parenthesised branch with its ORDER BY and LIMIT, glued by UNION ALL and tagged. Each
 * branch is planned on its own (the user_id/status/importance indexes, primary keys); a part not
 * asked for is switched off by its flag, so it costs nothing. Memory BM25 with its memories is a
 * second statement run beside it ({@link PostgresRecallLists.bm25WithMemories}).
 */
export class PostgresRecallLists implements MemoryListsSource {
  constructor(private readonly db: Queryable) {}

  async memoryLists(input: MemoryListsInput): Promise<MemoryLists> {
    const { important, byTypes, instructions } = input;
    const { rows } = await this.db.query<ListRow>(
      bind(LISTS, [
        input.userId,
        input.now,
        important !== undefined,
        important?.minImportance ?? 1,
        importantTypes(important?.types),
        important?.k ?? 0,
        byTypes !== undefined && byTypes.types.length > 0,
        byTypes?.types ?? [],
        byTypes?.k ?? 0,
        instructions !== undefined,
        instructions?.k ?? 0,
        input.persona === true,
        input.scenes === true,
        input.history === true,
        input.recent !== undefined,
        input.recent?.types && input.recent.types.length > 0 ? input.recent.types : null,
        input.recent?.k ?? 0,
      ]),
    );
    // UNION ALL keeps each parenthesised branch's order in practice, but SQL does not promise it across branches: re-sort per list.
    const of = (list: ListRow['list']) => rows.filter((r) => r.list === list).map(rowToMemory).sort((a, b) => b.importance - a.importance || b.updatedAt.getTime() - a.updatedAt.getTime());
    const recent = rows
      .filter((r) => r.list === 'recent')
      .map(rowToMemory)
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || b.importance - a.importance);
    // The recent route never filtered expiry; fusion must not take an expired one as loaded.
    const unexpired = (m: Memory) => m.expiresAt === null || m.expiresAt.getTime() > input.now.getTime();
    return {
      important: of('important').map((m) => m.id),
      byTypes: of('type'),
      recent: recent.map((m) => m.id),
      instructions: of('instruction'),
      memories: [...rows.filter((r) => ['important', 'type', 'instruction'].includes(r.list)).map(rowToMemory), ...recent.filter(unexpired)],
      ...stablePrefixOf(rows.map((r) => ({ part: r.list, extra: r.extra }))),
    };
  }

  async bm25WithMemories({ userId, now, tokens, k }: { userId: string; now: Date; tokens: string[]; k: number }): Promise<Bm25WithMemories> {
    const terms = [...termFrequencies(tokens).keys()];
    if (terms.length === 0) return { hits: [], memories: [] };
    // The k hits joined to their rows by primary key, after the ranking: the lateral holds only
    // the id, so no other index can serve it (as a plain join on a never-analyzed user the planner
    // read all 10k of the user's memories once and rescanned them per hit, 58 ms). The BM25 CTEs keep the
    // shape that holds whatever the statistics say (bm25-sql.ts), and a hit whose memory expired
    // keeps its rank in the route, as it did when fusion loaded it.
    const { rows } = await this.db.query<MemoryRow & { score: number; live: boolean }>(
      BM25,
      [userId, terms, k, now],
    );
    return { hits: rows.map((r) => ({ id: r.id, score: r.score })), memories: rows.filter((r) => r.live).map(rowToMemory) };
  }
}
