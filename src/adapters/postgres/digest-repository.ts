import type { DigestSections } from '../../core/proactive/digest-content';
import type { DigestRecord, DigestRepository, ImportanceChange, ProactiveMemory, ProactiveMemorySource } from '../../core/ports/proactive';
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

  async importanceRises({ userId, from, to, minScore, digestDate, limit }: { userId: string; from: Date; to: Date; minScore: number; digestDate: string; limit: number }): Promise<ImportanceChange[]> {
    // Reinforcement, recall, restore and the weekly refresh snapshot the score before and after;
    // an in-place update is a new memory that supersedes the old one, whose score is the "before".
    const { rows } = await this.q.query(
      `SELECT * FROM (
         SELECT e.id::text AS event_id, e.memory_id::text AS memory_id, e.created_at, m.text, m.type,
                COALESCE((e.before->>'importance')::float8, o.importance) AS before_score,
                COALESCE((e.after->>'importance')::float8, m.importance) AS after_score
           FROM memory_events e
           JOIN memories m ON m.user_id = e.user_id AND m.id = e.memory_id AND m.status = 'active'
           LEFT JOIN memories o ON e.action = 'update' AND o.user_id = m.user_id AND o.id = m.supersedes
           LEFT JOIN memory_events s ON s.user_id = e.user_id AND s.idempotency_key = 'escalate:' || e.id
          WHERE e.user_id = $1 AND e.created_at >= $2 AND e.created_at < $3
            AND e.action <> 'escalate'
            AND (s.id IS NULL OR s.after->>'digestDate' = $5)
            AND ((e.before ? 'importance' AND e.after ? 'importance') OR (e.action = 'update' AND o.id IS NOT NULL))
       ) c
       WHERE c.after_score >= $4 AND c.after_score > c.before_score
       ORDER BY c.created_at, c.event_id LIMIT $6`,
      [userId, from, to, minScore, digestDate, limit],
    );
    return rows.map((r) => ({ eventId: r.event_id, memoryId: r.memory_id, text: r.text, type: r.type, before: Number(r.before_score), after: Number(r.after_score), at: r.created_at }));
  }

  async goalsAndPainPointsAmong({ userId, ids }: { userId: string; ids: string[] }): Promise<{ id: string; text: string; type: string; status: string; pending: boolean }[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.q.query(
      `SELECT id::text AS id, text, type, status, pending FROM memories
        WHERE user_id = $1 AND id = ANY($2::uuid[]) AND type IN ('goal','pain_point')`,
      [userId, ids],
    );
    return rows.map((r) => ({ id: r.id, text: r.text, type: r.type, status: r.status, pending: r.pending }));
  }
}
