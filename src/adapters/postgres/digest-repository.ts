import type { DigestSections } from '../../core/proactive/digest-content';
import type { DigestRecord, DigestRepository, ProactiveMemory, ProactiveMemorySource } from '../../core/ports/proactive';
import type { Queryable } from './pool';

export type { DigestRecord };

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

/** Digests in PostgreSQL (`digests`), one row per user and local day. */
export class PostgresDigestRepository implements DigestRepository {
  constructor(private readonly q: Queryable) {}

  async upsert({ digest: d, at }: { digest: Omit<DigestRecord, 'createdAt' | 'updatedAt'>; at: Date }): Promise<DigestRecord> {
    const { rows } = await this.q.query(
      `INSERT INTO digests (user_id, digest_date, time_zone, text, sections, generated_by, created_at, updated_at)
       VALUES ($1, $2::date, $3, $4, $5, $6, $7, $7)
       ON CONFLICT (user_id, digest_date) DO UPDATE
         SET time_zone = EXCLUDED.time_zone, text = EXCLUDED.text, sections = EXCLUDED.sections,
             generated_by = EXCLUDED.generated_by, updated_at = EXCLUDED.updated_at
       RETURNING user_id, to_char(digest_date, 'YYYY-MM-DD') AS digest_date, time_zone, text, sections, generated_by, created_at, updated_at`,
      [d.userId, d.date, d.timeZone, d.text, JSON.stringify(d.sections), d.generatedBy, at],
    );
    return toRecord(rows[0]!);
  }

  async recent({ userId, today, days }: { userId: string; today: string; days: number }): Promise<DigestRecord[]> {
    const { rows } = await this.q.query(
      `SELECT user_id, to_char(digest_date, 'YYYY-MM-DD') AS digest_date, time_zone, text, sections, generated_by, created_at, updated_at
         FROM digests WHERE user_id = $1 AND digest_date <= $2::date AND digest_date > $2::date - $3::int
        ORDER BY digest_date DESC`,
      [userId, today, days],
    );
    return rows.map(toRecord);
  }
}

/** What the digest and the nudge triggers read of a user's memories, from `memories`. */
export class PostgresProactiveMemorySource implements ProactiveMemorySource {
  constructor(private readonly q: Queryable) {}

  async importantTouched({ userId, from, to, limit = 8 }: { userId: string; from: Date; to: Date; limit?: number }): Promise<ProactiveMemory[]> {
    const { rows } = await this.q.query(
      `SELECT id, text, type, importance_level FROM memories
        WHERE user_id = $1 AND status = 'active' AND importance_level IN ('high','critical')
          AND ((created_at >= $2 AND created_at < $3) OR (updated_at >= $2 AND updated_at < $3)
               OR (last_recalled_at >= $2 AND last_recalled_at < $3))
        ORDER BY importance DESC, updated_at DESC LIMIT $4`,
      [userId, from, to, limit],
    );
    return rows.map((r) => ({ id: r.id, text: r.text, type: r.type, importanceLevel: r.importance_level }));
  }

  async goalsAndPainPoints({ userId, limit = 100 }: { userId: string; limit?: number }): Promise<(ProactiveMemory & { frequencyCount: number; createdAt: Date; updatedAt: Date })[]> {
    const { rows } = await this.q.query(
      `SELECT id, text, type, importance_level, frequency_count, created_at, updated_at FROM memories
        WHERE user_id = $1 AND status = 'active' AND type IN ('goal','pain_point')
        ORDER BY importance DESC, updated_at DESC LIMIT $2`,
      [userId, limit],
    );
    return rows.map((r) => ({ id: r.id, text: r.text, type: r.type, importanceLevel: r.importance_level, frequencyCount: r.frequency_count, createdAt: r.created_at, updatedAt: r.updated_at }));
  }
}
