import type { MemoryLists, MemoryListsInput, MemoryListsSource } from '../../core/recall/memory-lists';
import { COLUMNS, rowToMemory, type MemoryRow } from './memory-repository';
import type { Queryable } from './pool';

/**
 * Recall's short lists in one statement (issue #22: a few round trips per recall): the same three
 * queries as `mostImportant`, `byTypes` and `byTypes(instruction, global)` of the memory
 * repository, each its own parenthesised branch with its ORDER BY and LIMIT, glued by UNION ALL
 * and tagged. Each branch is planned on its own (the user_id/status/importance indexes as before);
 * a list not asked for is switched off by its flag, so it costs nothing.
 */
export class PostgresRecallLists implements MemoryListsSource {
  constructor(private readonly db: Queryable) {}

  async memoryLists(input: MemoryListsInput): Promise<MemoryLists> {
    const { important, byTypes, instructions } = input;
    const { rows } = await this.db.query<MemoryRow & { list: 'important' | 'type' | 'instruction' }>(
      `(SELECT 'important' AS list, ${COLUMNS} FROM memories
         WHERE $2::boolean AND user_id = $1 AND status = 'active' AND type <> 'instruction' AND importance >= $4
           AND ($5::text[] IS NULL OR type = ANY($5::text[]))
           AND (expires_at IS NULL OR expires_at > $3::timestamptz)
         ORDER BY importance DESC, updated_at DESC
         LIMIT $6)
       UNION ALL
       (SELECT 'type', ${COLUMNS} FROM memories
         WHERE $7::boolean AND user_id = $1 AND status = 'active' AND type = ANY($8::text[]) AND NOT pending
           AND (expires_at IS NULL OR expires_at > $3::timestamptz)
         ORDER BY importance DESC, updated_at DESC
         LIMIT $9)
       UNION ALL
       (SELECT 'instruction', ${COLUMNS} FROM memories
         WHERE $10::boolean AND user_id = $1 AND status = 'active' AND type = 'instruction' AND scope = 'global' AND NOT pending
           AND (expires_at IS NULL OR expires_at > $3::timestamptz)
         ORDER BY importance DESC, updated_at DESC
         LIMIT $11)`,
      [
        input.userId,
        important !== undefined,
        input.now,
        important?.minImportance ?? 1,
        important?.types && important.types.length > 0 ? important.types : null,
        important?.k ?? 0,
        byTypes !== undefined && byTypes.types.length > 0,
        byTypes?.types ?? [],
        byTypes?.k ?? 0,
        instructions !== undefined,
        instructions?.k ?? 0,
      ],
    );
    // UNION ALL keeps each parenthesised branch's order in practice, but SQL does not promise it across branches: re-sort per list.
    const of = (list: string) => rows.filter((r) => r.list === list).map(rowToMemory).sort((a, b) => b.importance - a.importance || b.updatedAt.getTime() - a.updatedAt.getTime());
    return { important: of('important').map((m) => m.id), byTypes: of('type'), instructions: of('instruction') };
  }
}
