import type { Queryable } from './pool';

/** PostgreSQL channel that carries "something new for user X" from workers to API processes. */
export const PROACTIVE_CHANNEL = 'jarvis_proactive';

export type NotificationKind = 'reminder' | 'digest' | 'nudge';

export interface NotificationRecord {
  id: string;
  seq: number;
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  reminderId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
  readAt: Date | null;
}

export interface NewNotification {
  id: string;
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  reminderId?: string;
  data?: Record<string, unknown>;
  /** The same key never stores (or pushes) a second notification. */
  idempotencyKey: string;
}

/** Events announced on {@link PROACTIVE_CHANNEL}: ids only, the listener reads the rows (scoped by user). */
export type ProactiveEvent =
  | { type: 'notification'; userId: string; id: string; seq: number }
  | { type: 'reminder'; userId: string; reminderId: string; status: string };

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

export const notificationStore = {
  /**
   * Stores a notification once per idempotency key. Call inside a transaction together with
   * {@link notificationStore.announce}: NOTIFY is delivered on commit, so listeners never hear of
   * a row they cannot read yet.
   */
  async insert(q: Queryable, n: NewNotification, at: Date): Promise<{ notification: NotificationRecord; created: boolean }> {
    const { rows } = await q.query(
      `INSERT INTO notifications (id, user_id, kind, title, body, reminder_id, data, idempotency_key, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING *`,
      [n.id, n.userId, n.kind, n.title, n.body, n.reminderId ?? null, JSON.stringify(n.data ?? {}), n.idempotencyKey, at],
    );
    if (rows[0]) return { notification: toRecord(rows[0]), created: true };
    const existing = await q.query('SELECT * FROM notifications WHERE user_id = $1 AND idempotency_key = $2', [n.userId, n.idempotencyKey]);
    return { notification: toRecord(existing.rows[0]!), created: false };
  },

  async announce(q: Queryable, event: ProactiveEvent): Promise<void> {
    await q.query('SELECT pg_notify($1, $2)', [PROACTIVE_CHANNEL, JSON.stringify(event)]);
  },

  async get(q: Queryable, userId: string, id: string): Promise<NotificationRecord | undefined> {
    const { rows } = await q.query('SELECT * FROM notifications WHERE user_id = $1 AND id = $2', [userId, id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  },

  /** Newest first, or — with `afterSeq` — everything after a sequence number, oldest first (SSE resume). */
  async list(q: Queryable, userId: string, opts: { limit: number; kind?: NotificationKind; unread?: boolean; afterSeq?: number }): Promise<NotificationRecord[]> {
    const resume = opts.afterSeq !== undefined;
    const { rows } = await q.query(
      `SELECT * FROM notifications
        WHERE user_id = $1 AND ($2::text IS NULL OR kind = $2) AND (NOT $3::boolean OR read_at IS NULL)
          AND ($4::bigint IS NULL OR seq > $4)
        ORDER BY seq ${resume ? 'ASC' : 'DESC'} LIMIT $5`,
      [userId, opts.kind ?? null, opts.unread ?? false, opts.afterSeq ?? null, opts.limit],
    );
    return rows.map(toRecord);
  },

  async countSince(q: Queryable, userId: string, kind: NotificationKind, since: Date): Promise<number> {
    const { rows } = await q.query<{ n: string }>('SELECT count(*) AS n FROM notifications WHERE user_id = $1 AND kind = $2 AND created_at >= $3', [userId, kind, since]);
    return Number(rows[0]?.n ?? 0);
  },

  async markRead(q: Queryable, userId: string, ids: string[], at: Date): Promise<number> {
    const { rowCount } = await q.query('UPDATE notifications SET read_at = $3 WHERE user_id = $1 AND id = ANY($2::uuid[]) AND read_at IS NULL', [userId, ids, at]);
    return rowCount ?? 0;
  },
};
