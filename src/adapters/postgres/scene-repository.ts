import type { SceneStore, StoredScenes } from '../../core/persona/ports';
import type { PersonaLanguage } from '../../core/persona/profile';
import type { SceneEntry } from '../../core/persona/scenes';
import type { Queryable } from './pool';

const COLUMNS = 'user_id, language, scenes, lines, memory_version, tokens, built_at';

/** The `user_scenes` table (migrations/1796750000000_user-scenes.sql). */
export class PostgresSceneStore implements SceneStore {
  constructor(private readonly db: Queryable) {}

  async get({ userId }: { userId: string }): Promise<StoredScenes | undefined> {
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM user_scenes WHERE user_id = $1`, [userId]);
    const r = rows[0];
    if (!r) return undefined;
    return {
      userId: String(r.user_id),
      language: r.language as PersonaLanguage,
      scenes: r.scenes as SceneEntry[],
      lines: r.lines as string[],
      memoryVersion: String(r.memory_version),
      tokens: Number(r.tokens),
      builtAt: r.built_at as Date,
    };
  }

  async save(input: Parameters<SceneStore['save']>[0]): Promise<'written' | 'unchanged'> {
    const { rowCount } = await this.db.query(
      `INSERT INTO user_scenes (${COLUMNS}) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7)
       ON CONFLICT (user_id) DO UPDATE
         SET language = EXCLUDED.language, scenes = EXCLUDED.scenes, lines = EXCLUDED.lines,
             memory_version = EXCLUDED.memory_version, tokens = EXCLUDED.tokens, built_at = EXCLUDED.built_at
         WHERE user_scenes.memory_version IS DISTINCT FROM EXCLUDED.memory_version`,
      [input.userId, input.language, JSON.stringify(input.scenes), JSON.stringify(input.lines), input.memoryVersion, input.tokens, input.builtAt],
    );
    return (rowCount ?? 0) > 0 ? 'written' : 'unchanged';
  }

  async remove({ userId }: { userId: string }): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM user_scenes WHERE user_id = $1', [userId]);
    return (rowCount ?? 0) > 0;
  }
}
