import type { MemoryEvent, MemoryEventLog, StoredMemoryEvent } from '../../core/ports/memory';
import type { MemoryVia } from '../../core/types';
import type { Queryable } from './pool';

/** The audit trail of memory decisions (`memory_events`), around a pool or a transaction's client. */
export class PostgresMemoryEventLog implements MemoryEventLog {
  constructor(private readonly db: Queryable) {}

  /** Returns false when an event with the same idempotency key exists already. */
  async append({ event: e, at }: { event: MemoryEvent; at?: Date }): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `INSERT INTO memory_events (user_id, memory_id, action, reason, before, after, workflow_id, run_id,
         conversation_id, message_ids, actor, idempotency_key, created_at, via)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12, COALESCE($13, now()), $14)
       ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
      [
        e.userId, e.memoryId, e.action, e.reason,
        e.before === undefined ? null : JSON.stringify(e.before),
        e.after === undefined ? null : JSON.stringify(e.after),
        e.workflowId ?? null, e.runId ?? null, e.conversationId ?? null, e.messageIds ?? [], e.actor,
        e.idempotencyKey ?? null, at ?? null, e.via ?? null,
      ],
    );
    return rowCount === 1;
  }

  async findByKey({ userId, key }: { userId: string; key: string }): Promise<StoredMemoryEvent | undefined> {
    const { rows } = await this.db.query(`SELECT * FROM memory_events WHERE user_id = $1 AND idempotency_key = $2`, [userId, key]);
    return rows[0] ? toEvent(rows[0]) : undefined;
  }

  async history({ userId, memoryId }: { userId: string; memoryId: string }): Promise<StoredMemoryEvent[]> {
    const { rows } = await this.db.query(`SELECT * FROM memory_events WHERE user_id = $1 AND memory_id = $2 ORDER BY id`, [userId, memoryId]);
    return rows.map(toEvent);
  }
}

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
    ...(r.via ? { via: r.via as MemoryVia } : {}),
    idempotencyKey: (r.idempotency_key as string | null) ?? undefined,
    createdAt: r.created_at as Date,
  };
}
