import type { DigestSections } from '../../core/proactive/digest-content';
import type { Queryable } from './pool';

export interface DigestRecord {
  userId: string;
  date: string;
  timeZone: string;
  text: string;
  sections: DigestSections;
  generatedBy: 'llm' | 'template';
  createdAt: Date;
  updatedAt: Date;
}

function toRecord(r: Record<string, unknown>): DigestRecord {
  return {
    userId: r.user_id as string,
    date: r.digest_date as string,
    timeZone: r.time_zone as string,
    text: r.text as string,
    sections: r.sections as DigestSections,
    generatedBy: r.generated_by as 'llm' | 'template',
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

/** One digest per user and local day; a later run of the same day replaces the text. */
export const digestStore = {
  async upsert(q: Queryable, d: Omit<DigestRecord, 'createdAt' | 'updatedAt'>, at: Date): Promise<DigestRecord> {
    const { rows } = await q.query(
      `INSERT INTO digests (user_id, digest_date, time_zone, text, sections, generated_by, created_at, updated_at)
       VALUES ($1, $2::date, $3, $4, $5, $6, $7, $7)
       ON CONFLICT (user_id, digest_date) DO UPDATE
         SET time_zone = EXCLUDED.time_zone, text = EXCLUDED.text, sections = EXCLUDED.sections,
             generated_by = EXCLUDED.generated_by, updated_at = EXCLUDED.updated_at
       RETURNING user_id, to_char(digest_date, 'YYYY-MM-DD') AS digest_date, time_zone, text, sections, generated_by, created_at, updated_at`,
      [d.userId, d.date, d.timeZone, d.text, JSON.stringify(d.sections), d.generatedBy, at],
    );
    return toRecord(rows[0]!);
  },

  /** Digests of the last `days` local days up to and including `today` (YYYY-MM-DD), newest first. */
  async recent(q: Queryable, userId: string, today: string, days: number): Promise<DigestRecord[]> {
    const { rows } = await q.query(
      `SELECT user_id, to_char(digest_date, 'YYYY-MM-DD') AS digest_date, time_zone, text, sections, generated_by, created_at, updated_at
         FROM digests WHERE user_id = $1 AND digest_date <= $2::date AND digest_date > $2::date - $3::int
        ORDER BY digest_date DESC`,
      [userId, today, days],
    );
    return rows.map(toRecord);
  },
};

/** What a digest and the nudge triggers read about a user's day; scoped by user like everything else. */
export const proactiveSources = {
  async messagesBetween(q: Queryable, userId: string, from: Date, to: Date, limit = 1000): Promise<{ conversationId: string; role: 'user' | 'assistant'; content: string; at: Date }[]> {
    const { rows } = await q.query(
      `SELECT conversation_id, role, content, said_at FROM messages
        WHERE user_id = $1 AND said_at >= $2 AND said_at < $3 ORDER BY said_at, seq LIMIT $4`,
      [userId, from, to, limit],
    );
    return rows.map((r) => ({ conversationId: r.conversation_id, role: r.role, content: r.content, at: r.said_at }));
  },

  /** High and critical active memories created, changed or recalled in [from, to). */
  async importantTouched(q: Queryable, userId: string, from: Date, to: Date, limit = 8): Promise<{ id: string; text: string; type: string; importanceLevel: string }[]> {
    const { rows } = await q.query(
      `SELECT id, text, type, importance_level FROM memories
        WHERE user_id = $1 AND status = 'active' AND importance_level IN ('high','critical')
          AND ((created_at >= $2 AND created_at < $3) OR (updated_at >= $2 AND updated_at < $3)
               OR (last_recalled_at >= $2 AND last_recalled_at < $3))
        ORDER BY importance DESC, updated_at DESC LIMIT $4`,
      [userId, from, to, limit],
    );
    return rows.map((r) => ({ id: r.id, text: r.text, type: r.type, importanceLevel: r.importance_level }));
  },

  /** Active goals and pain points, most recently touched first. */
  async goalsAndPainPoints(q: Queryable, userId: string, limit = 100): Promise<{ id: string; text: string; type: string; importanceLevel: string; frequencyCount: number; createdAt: Date; updatedAt: Date }[]> {
    const { rows } = await q.query(
      `SELECT id, text, type, importance_level, frequency_count, created_at, updated_at FROM memories
        WHERE user_id = $1 AND status = 'active' AND type IN ('goal','pain_point')
        ORDER BY importance DESC, updated_at DESC LIMIT $2`,
      [userId, limit],
    );
    return rows.map((r) => ({ id: r.id, text: r.text, type: r.type, importanceLevel: r.importance_level, frequencyCount: r.frequency_count, createdAt: r.created_at, updatedAt: r.updated_at }));
  },
};
