import { PROACTIVE_CHANNEL, type NewNotification, type NotificationKind, type NotificationRecord, type NotificationRepository, type ProactiveEvent } from '../../core/ports/proactive';
import type { Queryable } from './pool';

export type { NewNotification, NotificationKind, NotificationRecord, ProactiveEvent };

export { PROACTIVE_CHANNEL };

function toRecord(r: Record<string, unknown>): NotificationRecord {
  return {
    id: r.id as string,
    seq: Number(r.seq),
    userId: r.user_id as string,
    kind: r.kind as NotificationKind,
    title: r.title as string,
    body: r.body as string,
    reminderId: (r.reminder_id as string | null) ?? null,
    data: (r.data as Record<string, unknown>) ?? {},
    createdAt: r.created_at as Date,
    readAt: (r.read_at as Date | null) ?? null,
  };
}

/**
 * Notifications in PostgreSQL (`notifications`); announcements are NOTIFYs on
 * {@link PROACTIVE_CHANNEL}, delivered on commit.
 */
export class PostgresNotificationRepository implements NotificationRepository {
  constructor(private readonly q: Queryable) {}

  async insert({ notification: n, at }: { notification: NewNotification; at: Date }): Promise<{ notification: NotificationRecord; created: boolean }> {
    const { rows } = await this.q.query(
      `INSERT INTO notifications (id, user_id, kind, title, body, reminder_id, data, idempotency_key, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING *`,
      [n.id, n.userId, n.kind, n.title, n.body, n.reminderId ?? null, JSON.stringify(n.data ?? {}), n.idempotencyKey, at],
    );
    if (rows[0]) return { notification: toRecord(rows[0]), created: true };
    const existing = await this.q.query('SELECT * FROM notifications WHERE user_id = $1 AND idempotency_key = $2', [n.userId, n.idempotencyKey]);
    return { notification: toRecord(existing.rows[0]!), created: false };
  }

  async announce(event: ProactiveEvent): Promise<void> {
    await this.q.query('SELECT pg_notify($1, $2)', [PROACTIVE_CHANNEL, JSON.stringify(event)]);
  }

  async get({ userId, id }: { userId: string; id: string }): Promise<NotificationRecord | undefined> {
    const { rows } = await this.q.query('SELECT * FROM notifications WHERE user_id = $1 AND id = $2', [userId, id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async list({ userId, ...opts }: { userId: string; limit: number; kind?: NotificationKind; unread?: boolean; afterSeq?: number }): Promise<NotificationRecord[]> {
    const resume = opts.afterSeq !== undefined;
    const { rows } = await this.q.query(
      `SELECT * FROM notifications
        WHERE user_id = $1 AND ($2::text IS NULL OR kind = $2) AND (NOT $3::boolean OR read_at IS NULL)
          AND ($4::bigint IS NULL OR seq > $4)
        ORDER BY seq ${resume ? 'ASC' : 'DESC'} LIMIT $5`,
      [userId, opts.kind ?? null, opts.unread ?? false, opts.afterSeq ?? null, opts.limit],
    );
    return rows.map(toRecord);
  }

  async countSince({ userId, kind, since }: { userId: string; kind: NotificationKind; since: Date }): Promise<number> {
    const { rows } = await this.q.query<{ n: string }>('SELECT count(*) AS n FROM notifications WHERE user_id = $1 AND kind = $2 AND created_at >= $3', [userId, kind, since]);
    return Number(rows[0]?.n ?? 0);
  }

  async lastNudgedAbout({ userId, memoryIds }: { userId: string; memoryIds: string[] }): Promise<Map<string, Date>> {
    if (memoryIds.length === 0) return new Map();
    const { rows } = await this.q.query<{ memory_id: string; at: Date }>(
      `SELECT data->>'memoryId' AS memory_id, max(created_at) AS at FROM notifications
        WHERE user_id = $1 AND kind = 'nudge' AND data->>'memoryId' = ANY($2::text[])
        GROUP BY 1`,
      [userId, memoryIds],
    );
    return new Map(rows.map((r) => [r.memory_id, r.at]));
  }

  async markRead({ userId, ids, at }: { userId: string; ids: string[]; at: Date }): Promise<number> {
    const { rowCount } = await this.q.query('UPDATE notifications SET read_at = $3 WHERE user_id = $1 AND id = ANY($2::uuid[]) AND read_at IS NULL', [userId, ids, at]);
    return rowCount ?? 0;
  }
}
