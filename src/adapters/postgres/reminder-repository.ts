import type { ReminderSource, ReminderState, ReminderStatus } from '../../core/proactive/reminder-state';
import type { NewReminder, ReminderRecord, ReminderRepository } from '../../core/ports/proactive';
import type { Queryable } from './pool';

export type { NewReminder, ReminderRecord, ReminderSource };

function toRecord(r: Record<string, unknown>): ReminderRecord {
  return {
    id: r.id as string,
    userId: r.user_id as string,
    text: r.text as string,
    status: r.status as ReminderStatus,
    dueAt: r.due_at as Date,
    timeZone: r.time_zone as string,
    rrule: (r.rrule as string | null) ?? null,
    seriesStart: (r.series_start as Date | null) ?? null,
    assumedTime: r.assumed_time as boolean,
    occurrence: r.occurrence as number,
    firedAt: (r.fired_at as Date | null) ?? null,
    snoozedUntil: (r.snoozed_until as Date | null) ?? null,
    dismissedAt: (r.dismissed_at as Date | null) ?? null,
    fireCount: r.fire_count as number,
    snoozeCount: r.snooze_count as number,
    version: r.version as number,
    source: r.source as ReminderSource,
    workflowId: r.workflow_id as string,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

/** Reminders in PostgreSQL (`reminders`), as their workflows last recorded them. */
export class PostgresReminderRepository implements ReminderRepository {
  constructor(private readonly q: Queryable) {}

  async insert({ reminder: r, at }: { reminder: NewReminder; at: Date }): Promise<{ reminder: ReminderRecord; created: boolean }> {
    const { rows } = await this.q.query(
      `INSERT INTO reminders (id, user_id, text, status, due_at, time_zone, rrule, series_start, assumed_time, source, workflow_id, created_at, updated_at)
       VALUES ($1, $2, $3, 'scheduled', $4, $5, $6, $7, $8, $9, $10, $11, $11)
       ON CONFLICT (id) DO NOTHING RETURNING *`,
      [r.id, r.userId, r.text, r.dueAt, r.timeZone, r.rrule, r.seriesStart, r.assumedTime, JSON.stringify(r.source), r.workflowId, at],
    );
    if (rows[0]) return { reminder: toRecord(rows[0]), created: true };
    const existing = await this.get({ userId: r.userId, id: r.id });
    if (!existing) throw new Error(`reminder ${r.id} exists for another user`);
    return { reminder: existing, created: false };
  }

  async applyState({ userId, state, at }: { userId: string; state: ReminderState; at: Date }): Promise<ReminderRecord | undefined> {
    const version = typeof state.version === 'number' ? state.version : null;
    const { rows } = await this.q.query(
      `UPDATE reminders SET status = $3, due_at = $4, occurrence = $5, fired_at = $6, snoozed_until = $7,
              dismissed_at = $8, fire_count = $10, snooze_count = $11, version = COALESCE($12::integer, version),
              updated_at = GREATEST(updated_at, $9)
        WHERE user_id = $1 AND id = $2 AND (CASE WHEN $12::integer IS NULL THEN version = 0 ELSE version < $12::integer END)
        RETURNING *`,
      [
        userId,
        state.reminderId,
        state.status,
        state.dueAt,
        state.occurrence,
        state.firedAt ?? null,
        state.snoozedUntil ?? null,
        state.dismissedAt ?? null,
        at,
        state.fireCount ?? 0,
        state.snoozeCount ?? 0,
        version,
      ],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async startOccurrence({ userId, state, at }: { userId: string; state: ReminderState; at: Date }): Promise<ReminderRecord | undefined> {
    const { rows } = await this.q.query(
      `UPDATE reminders SET status = $3, due_at = $4, occurrence = $5, fired_at = NULL, snoozed_until = NULL,
              dismissed_at = NULL, fire_count = 0, snooze_count = 0, version = GREATEST(version + 1, $7::integer),
              updated_at = GREATEST(updated_at, $6)
        WHERE user_id = $1 AND id = $2 AND occurrence < $5
        RETURNING *`,
      [userId, state.reminderId, state.status, state.dueAt, state.occurrence, at, state.version],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async get({ userId, id }: { userId: string; id: string }): Promise<ReminderRecord | undefined> {
    const { rows } = await this.q.query('SELECT * FROM reminders WHERE user_id = $1 AND id = $2', [userId, id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async list({ userId, ...opts }: { userId: string; status?: ReminderStatus; limit: number }): Promise<ReminderRecord[]> {
    const { rows } = await this.q.query(
      `SELECT * FROM reminders WHERE user_id = $1 AND ($2::text IS NULL OR status = $2)
        ORDER BY due_at DESC, id LIMIT $3`,
      [userId, opts.status ?? null, opts.limit],
    );
    return rows.map(toRecord);
  }

  async dueBetween({ userId, from, to }: { userId: string; from: Date; to: Date }): Promise<ReminderRecord[]> {
    const { rows } = await this.q.query(
      `SELECT * FROM reminders
        WHERE user_id = $1 AND status IN ('scheduled','snoozed')
          AND COALESCE(snoozed_until, due_at) >= $2 AND COALESCE(snoozed_until, due_at) < $3
        ORDER BY COALESCE(snoozed_until, due_at) LIMIT 50`,
      [userId, from, to],
    );
    return rows.map(toRecord);
  }

  /**
   * Open reminders whose workflow has not been seen to start (workflow_started_at NULL), created
   * before `createdBefore`, across users: the reminder reconciler's scan. Never-tried rows come
   * first, oldest first, then rows whose start failed, least recently failed first, so a row that
   * always fails cannot hold the head of every batch. Each row carries its own user, and every
   * start and mark after it is keyed by that user.
   */
  async unstarted({ createdBefore, limit }: { createdBefore: Date; limit: number }): Promise<ReminderRecord[]> {
    const { rows } = await this.q.query(
      `-- all-users: the reconciler's scan; each row's start and mark are keyed by its own user_id
       SELECT * FROM reminders
        WHERE workflow_started_at IS NULL AND status IN ('scheduled','snoozed') AND created_at < $1
        ORDER BY workflow_start_failed_at NULLS FIRST, created_at, id LIMIT $2`,
      [createdBefore, limit],
    );
    return rows.map(toRecord);
  }

  async neverStarted({ userId, id }: { userId: string; id: string }): Promise<boolean> {
    const { rows } = await this.q.query('SELECT 1 FROM reminders WHERE user_id = $1 AND id = $2 AND workflow_started_at IS NULL', [userId, id]);
    return rows.length > 0;
  }

  async markWorkflowStarted({ userId, id, at }: { userId: string; id: string; at: Date }): Promise<void> {
    await this.q.query('UPDATE reminders SET workflow_started_at = $3 WHERE user_id = $1 AND id = $2 AND workflow_started_at IS NULL', [userId, id, at]);
  }

  async markWorkflowStartFailed({ userId, id, at, error }: { userId: string; id: string; at: Date; error: string }): Promise<void> {
    await this.q.query(
      `UPDATE reminders SET workflow_start_failures = workflow_start_failures + 1, workflow_start_failed_at = $3, workflow_start_error = left($4, 500)
        WHERE user_id = $1 AND id = $2 AND workflow_started_at IS NULL`,
      [userId, id, at, error],
    );
  }

  async remove({ userId, id }: { userId: string; id: string }): Promise<void> {
    await this.q.query('DELETE FROM reminders WHERE user_id = $1 AND id = $2', [userId, id]);
  }
}
