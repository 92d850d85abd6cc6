import type { PersonaStore, RecallPersona, StoredPersona } from '../../core/persona/ports';
import type { PersonaBuilder, PersonaLanguage, PersonaLine } from '../../core/persona/profile';
import type { Queryable } from './pool';

const COLUMNS = 'user_id, text, lines, memory_ids, memory_version, language, builder, tokens, built_at';

function toStored(r: Record<string, unknown>): StoredPersona {
  return {
    userId: String(r.user_id),
    text: String(r.text),
    lines: r.lines as PersonaLine[],
    memoryIds: (r.memory_ids as string[]) ?? [],
    memoryVersion: String(r.memory_version),
    language: r.language as PersonaLanguage,
    builder: r.builder as PersonaBuilder,
    tokens: Number(r.tokens),
    builtAt: r.built_at as Date,
  };
}

/**
 * The columns recall reads of a persona row aliased `p`, with `now` the SQL of the request's time:
 * the row by its key, and which of its memories are gone (primary-key probes, a few dozen at most).
 * Shared with the statement that reads recall's short lists (recall-lists-repository.ts).
 */
export function recallPersonaColumns(p: string, now: string): string {
  return `${p}.lines, ${p}.language, ${p}.builder, ${p}.built_at,
          ARRAY(SELECT s.id::text FROM unnest(${p}.memory_ids) AS s(id)
                 WHERE NOT EXISTS (SELECT 1 FROM memories m
                                    WHERE m.id = s.id AND m.user_id = ${p}.user_id AND m.status = 'active'
                                      AND (m.expires_at IS NULL OR m.expires_at > ${now}))) AS gone`;
}

/** A persona row as {@link recallPersonaColumns} reads it (`built_at` a Date, or its JSON text). */
export interface RecallPersonaRow {
  lines: PersonaLine[];
  language: string;
  builder: string;
  built_at: Date | string;
  gone: string[];
}

/** The persona as recall injects it: lines stating a memory that is gone are left out; none left, no persona. */
export function recallPersonaOf(r: RecallPersonaRow): RecallPersona | undefined {
  const gone = new Set(r.gone);
  const lines = r.lines.filter((l) => !l.memoryIds.some((id) => gone.has(id)));
  if (lines.length === 0) return undefined;
  return { language: r.language as PersonaLanguage, builder: r.builder as PersonaBuilder, lines, builtAt: new Date(r.built_at) };
}

/** The `user_profiles` table (migrations/1796550000000_user-profiles.sql). */
export class PostgresPersonaStore implements PersonaStore {
  constructor(private readonly db: Queryable) {}

  async get({ userId }: { userId: string }): Promise<StoredPersona | undefined> {
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM user_profiles WHERE user_id = $1`, [userId]);
    return rows[0] ? toStored(rows[0]) : undefined;
  }

  async forRecall({ userId, now }: { userId: string; now: Date }): Promise<RecallPersona | undefined> {
    const { rows } = await this.db.query(`SELECT ${recallPersonaColumns('p', '$2')} FROM user_profiles p WHERE p.user_id = $1`, [userId, now]);
    return rows[0] ? recallPersonaOf(rows[0] as RecallPersonaRow) : undefined;
  }

  async save({ userId, profile, memoryVersion, builtAt }: Parameters<PersonaStore['save']>[0]): Promise<'written' | 'unchanged' | 'stale'> {
    const ids = profile.memoryIds;
    // One statement: written only while every memory it states is still active (a memory retired
    // meanwhile, or a purge, wins), and only when the text or its memories differ.
    const { rows } = await this.db.query(
      `WITH live AS (SELECT count(*)::int AS n FROM memories WHERE user_id = $1 AND id = ANY($4::uuid[]) AND status = 'active'),
            written AS (
              INSERT INTO user_profiles (${COLUMNS})
              SELECT $1, $2, $3::jsonb, $4::uuid[], $5, $6, $7, $8, $9 FROM live WHERE live.n = cardinality($4::uuid[])
              ON CONFLICT (user_id) DO UPDATE
                SET text = EXCLUDED.text, lines = EXCLUDED.lines, memory_ids = EXCLUDED.memory_ids, memory_version = EXCLUDED.memory_version,
                    language = EXCLUDED.language, builder = EXCLUDED.builder, tokens = EXCLUDED.tokens, built_at = EXCLUDED.built_at
                WHERE user_profiles.text IS DISTINCT FROM EXCLUDED.text OR user_profiles.memory_ids IS DISTINCT FROM EXCLUDED.memory_ids
              RETURNING 1)
       SELECT (SELECT n FROM live) = cardinality($4::uuid[]) AS live, EXISTS (SELECT 1 FROM written) AS written`,
      [userId, profile.text, JSON.stringify(profile.lines), ids, memoryVersion, profile.language, profile.builder, profile.tokens, builtAt],
    );
    const r = rows[0] as { live: boolean; written: boolean };
    return !r.live ? 'stale' : r.written ? 'written' : 'unchanged';
  }

  async remove({ userId }: { userId: string }): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM user_profiles WHERE user_id = $1', [userId]);
    return (rowCount ?? 0) > 0;
  }
}
