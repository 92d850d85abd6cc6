import type pg from 'pg';
import type { Queryable } from './pool';

/** What was decided about a memory, by whom, in which workflow run: one row of the audit trail. */
export interface MemoryEvent {
  userId: string;
  memoryId: string | null;
  action: string;
  reason: string;
  before?: unknown;
  after?: unknown;
  workflowId?: string;
  runId?: string;
  conversationId?: string;
  messageIds?: string[];
  actor: string;
  /** Makes a retried activity record its decision once. */
  idempotencyKey?: string;
}

export interface StoredMemoryEvent extends MemoryEvent {
  id: string;
  createdAt: Date;
}

export const eventStore = {
  /** Returns false when an event with the same idempotency key exists already. */
  async insert(c: pg.PoolClient | Queryable, e: MemoryEvent, at?: Date): Promise<boolean> {
    const { rowCount } = await c.query(
      `INSERT INTO memory_events (user_id, memory_id, action, reason, before, after, workflow_id, run_id,
         conversation_id, message_ids, actor, idempotency_key, created_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12, COALESCE($13, now()))
       ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
      [
        e.userId, e.memoryId, e.action, e.reason,
        e.before === undefined ? null : JSON.stringify(e.before),
        e.after === undefined ? null : JSON.stringify(e.after),
        e.workflowId ?? null, e.runId ?? null, e.conversationId ?? null, e.messageIds ?? [], e.actor,
        e.idempotencyKey ?? null, at ?? null,
      ],
    );
    return rowCount === 1;
  },

  async findByKey(q: Queryable, userId: string, key: string): Promise<StoredMemoryEvent | undefined> {
    const { rows } = await q.query(`SELECT * FROM memory_events WHERE user_id = $1 AND idempotency_key = $2`, [userId, key]);
    return rows[0] ? toEvent(rows[0]) : undefined;
  },

  async history(q: Queryable, userId: string, memoryId: string): Promise<StoredMemoryEvent[]> {
    const { rows } = await q.query(`SELECT * FROM memory_events WHERE user_id = $1 AND memory_id = $2 ORDER BY id`, [userId, memoryId]);
    return rows.map(toEvent);
  },
};

function toEvent(r: Record<string, unknown>): StoredMemoryEvent {
  return {
    id: String(r.id),
    userId: r.user_id as string,
    memoryId: (r.memory_id as string | null) ?? null,
    action: r.action as string,
    reason: r.reason as string,
    before: r.before ?? undefined,
    after: r.after ?? undefined,
    workflowId: (r.workflow_id as string | null) ?? undefined,
    runId: (r.run_id as string | null) ?? undefined,
    conversationId: (r.conversation_id as string | null) ?? undefined,
    messageIds: r.message_ids as string[],
    actor: r.actor as string,
    idempotencyKey: (r.idempotency_key as string | null) ?? undefined,
    createdAt: r.created_at as Date,
  };
}
