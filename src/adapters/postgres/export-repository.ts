import type { Queryable } from './pool';

/**
 * Keyset-paged reads of everything a user's export contains. Every query is filtered by the user
 * and walks an index in key order from the last key of the previous page, so a page costs the
 * same at the end of a million rows as at the start. Rows come back as export views (camelCase,
 * ISO times): internal references — workflow and run ids, idempotency keys, derived search data —
 * are not selected.
 */

/** A page of rows and the key to continue after (null when this was the last page). */
export interface ExportPage<T, K> {
  rows: T[];
  next: K | null;
}

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

function page<T, K>(rows: T[], limit: number, key: (last: T) => K): ExportPage<T, K> {
  return { rows, next: rows.length < limit ? null : key(rows[rows.length - 1]!) };
}

export interface ExportEvent {
  id: string;
  memoryId: string | null;
  action: string;
  reason: string;
  before: unknown;
  after: unknown;
  conversationId: string | null;
  messageIds: string[];
  actor: string;
  createdAt: string | null;
}

const EVENT_COLUMNS = 'id, memory_id, action, reason, before, after, conversation_id, message_ids, actor, created_at';
function toEvent(r: Record<string, unknown>): ExportEvent {
  return {
    id: String(r.id),
    memoryId: (r.memory_id as string | null) ?? null,
    action: r.action as string,
    reason: r.reason as string,
    before: r.before ?? null,
    after: r.after ?? null,
    conversationId: (r.conversation_id as string | null) ?? null,
    messageIds: r.message_ids as string[],
    actor: r.actor as string,
    createdAt: iso(r.created_at as Date),
  };
}

export const exportStore = {
  async user(q: Queryable, userKey: string): Promise<{ tenantId: string; timezone: string; settings: unknown; createdAt: string | null } | undefined> {
    const { rows } = await q.query('SELECT tenant_id, timezone, settings, created_at FROM users WHERE user_id = $1', [userKey]);
    const r = rows[0];
    return r ? { tenantId: r.tenant_id, timezone: r.timezone, settings: r.settings, createdAt: iso(r.created_at) } : undefined;
  },

  /** Memories in id order, each with its full history (memory_events of that memory, in order). */
  async memories(q: Queryable, userKey: string, after: string | null, limit: number): Promise<ExportPage<Record<string, unknown> & { id: string; history: ExportEvent[] }, string>> {
    const { rows } = await q.query(
      `SELECT id, text, type, status, scope, confidence, importance, importance_level, importance_components, frequency_count,
              decay_score, emotion_tags, associated_topics, keywords, source, metadata, created_at, updated_at, last_recalled_at,
              last_accessed_at, expires_at, archived_at, supersedes, superseded_by
         FROM memories WHERE user_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [userKey, after, limit],
    );
    const ids = rows.map((r) => r.id as string);
    const events = ids.length
      ? (await q.query(`SELECT ${EVENT_COLUMNS} FROM memory_events WHERE user_id = $1 AND memory_id = ANY($2::uuid[]) ORDER BY memory_id, id`, [userKey, ids])).rows.map(toEvent)
      : [];
    const history = new Map<string, ExportEvent[]>();
    for (const e of events) history.set(e.memoryId!, [...(history.get(e.memoryId!) ?? []), e]);
    const out = rows.map((r) => ({
      id: r.id as string,
      text: r.text,
      type: r.type,
      status: r.status,
      scope: r.scope,
      confidence: r.confidence,
      importance: r.importance,
      importanceLevel: r.importance_level,
      importanceComponents: r.importance_components,
      frequencyCount: r.frequency_count,
      decayScore: r.decay_score,
      emotionTags: r.emotion_tags,
      associatedTopics: r.associated_topics,
      keywords: r.keywords,
      source: r.source,
      metadata: r.metadata,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
      lastRecalledAt: iso(r.last_recalled_at),
      lastAccessedAt: iso(r.last_accessed_at),
      expiresAt: iso(r.expires_at),
      archivedAt: iso(r.archived_at),
      supersedes: r.supersedes,
      supersededBy: r.superseded_by,
      history: history.get(r.id) ?? [],
    }));
    return page(out, limit, (m) => m.id);
  },

  /**
   * Audit events that belong to no stored memory: decisions that created nothing (an ignored
   * statement, a forget request) and the text-free record of an erased memory. In two runs, each
   * an index range of memory_events (user_id, memory_id, id): memory_id NULL, then the rest.
   */
  async otherEvents(q: Queryable, userKey: string, after: { orphans: boolean; memoryId: string | null; id: string } | null, limit: number): Promise<ExportPage<ExportEvent, { orphans: boolean; memoryId: string | null; id: string }>> {
    if (!after?.orphans) {
      const { rows } = await q.query(
        `SELECT ${EVENT_COLUMNS} FROM memory_events WHERE user_id = $1 AND memory_id IS NULL AND id > $2::bigint ORDER BY id LIMIT $3`,
        [userKey, after?.id ?? '0', limit],
      );
      const events = rows.map(toEvent);
      if (events.length === limit) return { rows: events, next: { orphans: false, memoryId: null, id: events[events.length - 1]!.id } };
      // Decisions done; continue with events of memories that no longer exist.
      return { rows: events, next: { orphans: true, memoryId: '00000000-0000-0000-0000-000000000000', id: '0' } };
    }
    const { rows } = await q.query(
      `SELECT ${EVENT_COLUMNS.split(', ').map((c) => `e.${c}`).join(', ')} FROM memory_events e
        WHERE e.user_id = $1 AND e.memory_id IS NOT NULL AND (e.memory_id, e.id) > ($2::uuid, $3::bigint)
          AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.memory_id AND m.user_id = $1)
        ORDER BY e.memory_id, e.id LIMIT $4`,
      [userKey, after.memoryId, after.id, limit],
    );
    return page(rows.map(toEvent), limit, (e) => ({ orphans: true, memoryId: e.memoryId, id: e.id }));
  },

  async conversations(q: Queryable, userKey: string, after: string | null, limit: number): Promise<ExportPage<{ conversationId: string; startedAt: string | null; lastMessageAt: string | null; endedAt: string | null }, string>> {
    const { rows } = await q.query(
      `SELECT conversation_id, started_at, last_message_at, ended_at FROM conversations
        WHERE user_id = $1 AND ($2::text IS NULL OR conversation_id > $2) ORDER BY conversation_id LIMIT $3`,
      [userKey, after, limit],
    );
    return page(
      rows.map((r) => ({ conversationId: r.conversation_id, startedAt: iso(r.started_at), lastMessageAt: iso(r.last_message_at), endedAt: iso(r.ended_at) })),
      limit,
      (c) => c.conversationId,
    );
  },

  /** Messages by conversation, in arrival order within each (index messages_conversation_seq_idx). */
  async messages(q: Queryable, userKey: string, after: { conversationId: string; seq: number } | null, limit: number) {
    const { rows } = await q.query(
      `SELECT conversation_id, message_id, seq, role, content, said_at, received_at, truncated FROM messages
        WHERE user_id = $1 AND ($2::text IS NULL OR (conversation_id, seq) > ($2, $3::bigint))
        ORDER BY conversation_id, seq LIMIT $4`,
      [userKey, after?.conversationId ?? null, after?.seq ?? 0, limit],
    );
    const out = rows.map((r) => ({
      conversationId: r.conversation_id as string,
      messageId: r.message_id as string,
      seq: Number(r.seq),
      role: r.role as string,
      content: r.content as string,
      saidAt: iso(r.said_at),
      receivedAt: iso(r.received_at),
      truncated: r.truncated as boolean,
    }));
    return page(out, limit, (m) => ({ conversationId: m.conversationId, seq: m.seq }));
  },

  async episodes(q: Queryable, userKey: string, after: string | null, limit: number) {
    const { rows } = await q.query(
      `SELECT id, conversation_id, to_char(day, 'YYYY-MM-DD') AS day, time_zone, started_at, ended_at, summary, message_ids,
              summary_message_ids, created_at, updated_at
         FROM episodes WHERE user_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [userKey, after, limit],
    );
    const out = rows.map((r) => ({
      id: r.id as string,
      conversationId: r.conversation_id,
      day: r.day,
      timeZone: r.time_zone,
      startedAt: iso(r.started_at),
      endedAt: iso(r.ended_at),
      summary: r.summary,
      messageIds: r.message_ids,
      summaryMessageIds: r.summary_message_ids,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    }));
    return page(out, limit, (e) => e.id);
  },

  async reminders(q: Queryable, userKey: string, after: string | null, limit: number) {
    const { rows } = await q.query(
      `SELECT id, text, status, due_at, time_zone, rrule, series_start, assumed_time, occurrence, fired_at, snoozed_until,
              dismissed_at, source, created_at, updated_at
         FROM reminders WHERE user_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [userKey, after, limit],
    );
    const out = rows.map((r) => ({
      id: r.id as string,
      text: r.text,
      status: r.status,
      dueAt: iso(r.due_at),
      timeZone: r.time_zone,
      rrule: r.rrule,
      seriesStart: iso(r.series_start),
      assumedTime: r.assumed_time,
      occurrence: r.occurrence,
      firedAt: iso(r.fired_at),
      snoozedUntil: iso(r.snoozed_until),
      dismissedAt: iso(r.dismissed_at),
      source: r.source,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    }));
    return page(out, limit, (x) => x.id);
  },

  async notifications(q: Queryable, userKey: string, after: number | null, limit: number) {
    const { rows } = await q.query(
      `SELECT id, seq, kind, title, body, reminder_id, data, created_at, read_at FROM notifications
        WHERE user_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3`,
      [userKey, after ?? 0, limit],
    );
    const out = rows.map((r) => ({
      id: r.id as string,
      seq: Number(r.seq),
      kind: r.kind,
      title: r.title,
      body: r.body,
      reminderId: r.reminder_id,
      data: r.data,
      createdAt: iso(r.created_at),
      readAt: iso(r.read_at),
    }));
    return page(out, limit, (n) => n.seq);
  },

  async digests(q: Queryable, userKey: string, after: string | null, limit: number) {
    const { rows } = await q.query(
      `SELECT to_char(digest_date, 'YYYY-MM-DD') AS date, time_zone, text, sections, generated_by, created_at, updated_at FROM digests
        WHERE user_id = $1 AND ($2::date IS NULL OR digest_date > $2::date) ORDER BY digest_date LIMIT $3`,
      [userKey, after, limit],
    );
    const out = rows.map((r) => ({
      date: r.date as string,
      timeZone: r.time_zone,
      text: r.text,
      sections: r.sections,
      generatedBy: r.generated_by,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    }));
    return page(out, limit, (d) => d.date);
  },

  /** Entities with the memories that mention them. */
  async entities(q: Queryable, userKey: string, after: string | null, limit: number) {
    const { rows } = await q.query(
      `SELECT e.id, e.name, e.kind, e.created_at,
              COALESCE((SELECT array_agg(me.memory_id ORDER BY me.memory_id) FROM memory_entities me WHERE me.entity_id = e.id), '{}') AS memory_ids
         FROM entities e WHERE e.user_id = $1 AND ($2::uuid IS NULL OR e.id > $2::uuid) ORDER BY e.id LIMIT $3`,
      [userKey, after, limit],
    );
    const out = rows.map((r) => ({ id: r.id as string, name: r.name, kind: r.kind, memoryIds: r.memory_ids, createdAt: iso(r.created_at) }));
    return page(out, limit, (e) => e.id);
  },

  async relations(q: Queryable, userKey: string, after: { sourceId: string; relation: string; targetId: string; memoryId: string } | null, limit: number) {
    const { rows } = await q.query(
      `SELECT r.source_id, s.name AS source_name, r.relation, r.target_id, t.name AS target_name, r.memory_id, r.created_at
         FROM relations r
         LEFT JOIN entities s ON s.id = r.source_id AND s.user_id = $1
         LEFT JOIN entities t ON t.id = r.target_id AND t.user_id = $1
        WHERE r.user_id = $1 AND ($2::uuid IS NULL OR (r.source_id, r.relation, r.target_id, r.memory_id) > ($2::uuid, $3::text, $4::uuid, $5::uuid))
        ORDER BY r.source_id, r.relation, r.target_id, r.memory_id LIMIT $6`,
      [userKey, after?.sourceId ?? null, after?.relation ?? '', after?.targetId ?? null, after?.memoryId ?? null, limit],
    );
    const out = rows.map((r) => ({
      sourceId: r.source_id as string,
      source: r.source_name as string | null,
      relation: r.relation as string,
      targetId: r.target_id as string,
      target: r.target_name as string | null,
      memoryId: r.memory_id as string,
      createdAt: iso(r.created_at),
    }));
    return page(out, limit, (x) => ({ sourceId: x.sourceId, relation: x.relation, targetId: x.targetId, memoryId: x.memoryId }));
  },
};
