import type pg from 'pg';
import type { ExportedUser, ExportPage, ExportSection, UserExportReader, UserExportSnapshot, UserExportSource } from '../../core/ports/privacy';
import { PostgresSceneStore } from './scene-repository';
import { PostgresPersonaStore } from './persona-repository';
import { boundedQuery, queryTimeoutOf, type Queryable } from './pool';

/**
 * Keyset-paged reads of everything a user's export contains. Every query is filtered by the user
 * and walks an index in key order from the last key of the previous page, so a page costs the
 * same at the end of a million rows as at the start. Rows come back as export views (camelCase,
 * ISO times): internal references — workflow and run ids, idempotency keys, derived search data —
 * are not selected.
 */

type Row = Record<string, unknown>;

const camel = (column: string) => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** A row as the export shows it: camelCase keys in column order, times as ISO strings, `numeric` (bigint) columns as numbers. */
function view(r: Row, numeric: readonly string[] = []): Row {
  const out: Row = {};
  for (const [column, value] of Object.entries(r)) {
    out[camel(column)] = value instanceof Date ? value.toISOString() : numeric.includes(column) && value !== null ? Number(value) : value;
  }
  return out;
}

function page<K>(rows: Row[], limit: number, key: (last: Row) => K): ExportPage<K> {
  return { rows, next: rows.length < limit ? null : key(rows[rows.length - 1]!) };
}

/** A section read in the order of one key column, continuing after the previous page's last key. */
interface KeyedSection {
  columns: string;
  table: string;
  key: string;
  keyType: 'uuid' | 'text' | 'date' | 'bigint';
  /** The export view's field holding the key. */
  keyField: string;
  numeric?: readonly string[];
}

const SECTIONS: Record<'memories' | 'conversations' | 'episodes' | 'reminders' | 'notifications' | 'digests', KeyedSection> = {
  memories: {
    columns: `id, text, type, status, scope, confidence, importance, importance_level, importance_components, frequency_count,
              decay_score, emotion_tags, associated_topics, keywords, source, metadata, created_at, updated_at, last_recalled_at,
              last_accessed_at, expires_at, archived_at, supersedes, superseded_by, via, pending`,
    table: 'memories',
    key: 'id',
    keyType: 'uuid',
    keyField: 'id',
  },
  conversations: { columns: 'conversation_id, started_at, last_message_at, ended_at', table: 'conversations', key: 'conversation_id', keyType: 'text', keyField: 'conversationId' },
  episodes: {
    columns: `id, conversation_id, to_char(day, 'YYYY-MM-DD') AS day, time_zone, started_at, ended_at, summary, message_ids,
              summary_message_ids, created_at, updated_at`,
    table: 'episodes',
    key: 'id',
    keyType: 'uuid',
    keyField: 'id',
  },
  reminders: {
    columns: `id, text, status, due_at, time_zone, rrule, series_start, assumed_time, occurrence, fired_at, snoozed_until,
              dismissed_at, source, created_at, updated_at`,
    table: 'reminders',
    key: 'id',
    keyType: 'uuid',
    keyField: 'id',
  },
  notifications: { columns: 'id, seq, kind, title, body, reminder_id, data, created_at, read_at', table: 'notifications', key: 'seq', keyType: 'bigint', keyField: 'seq', numeric: ['seq'] },
  digests: {
    columns: `to_char(digest_date, 'YYYY-MM-DD') AS date, time_zone, text, sections, generated_by, created_at, updated_at`,
    table: 'digests',
    key: 'digest_date',
    keyType: 'date',
    keyField: 'date',
  },
};

const EVENT_COLUMNS = ['id', 'memory_id', 'action', 'reason', 'before', 'after', 'conversation_id', 'message_ids', 'actor', 'via', 'created_at'];

type OtherEventsKey = { orphans: boolean; memoryId: string | null; id: string };
type MessageKey = { conversationId: string; seq: number };
type RelationKey = { sourceId: string; relation: string; targetId: string; memoryId: string };

/** The export's reads over one client (in production a REPEATABLE READ snapshot, see {@link PostgresUserExportSource}). */
export class PostgresExportRepository implements UserExportReader {
  constructor(private readonly q: Queryable) {}

  async user({ userKey }: { userKey: string }): Promise<ExportedUser | undefined> {
    const { rows } = await this.q.query('SELECT tenant_id, timezone, settings, created_at FROM users WHERE user_id = $1', [userKey]);
    const r = rows[0];
    return r ? { tenantId: r.tenant_id, timezone: r.timezone, settings: r.settings, createdAt: r.created_at ? (r.created_at as Date).toISOString() : null } : undefined;
  }

  async profile({ userKey }: { userKey: string }): Promise<Record<string, unknown> | null> {
    const p = await new PostgresPersonaStore(this.q).get({ userId: userKey });
    return p ? { text: p.text, lines: p.lines, memoryIds: p.memoryIds, language: p.language, builder: p.builder, tokens: p.tokens, builtAt: p.builtAt.toISOString() } : null;
  }

  async scenes({ userKey }: { userKey: string }): Promise<Record<string, unknown> | null> {
    const s = await new PostgresSceneStore(this.q).get({ userId: userKey });
    return s ? { language: s.language, scenes: s.scenes, lines: s.lines, tokens: s.tokens, builtAt: s.builtAt.toISOString() } : null;
  }

  page({ section, userKey, after, limit }: { section: ExportSection; userKey: string; after: unknown; limit: number }): Promise<ExportPage> {
    switch (section) {
      case 'memories':
        return this.memories(userKey, after as string | null, limit);
      case 'otherEvents':
        return this.otherEvents(userKey, after as OtherEventsKey | null, limit);
      case 'messages':
        return this.messages(userKey, after as MessageKey | null, limit);
      case 'entities':
        return this.entities(userKey, after as string | null, limit);
      case 'relations':
        return this.relations(userKey, after as RelationKey | null, limit);
      default:
        return this.keyed(SECTIONS[section], userKey, after, limit);
    }
  }

  private async keyed(s: KeyedSection, userKey: string, after: unknown, limit: number): Promise<ExportPage> {
    const { rows } = await this.q.query(
      `SELECT ${s.columns} FROM ${s.table} WHERE user_id = $1 AND ($2::${s.keyType} IS NULL OR ${s.key} > $2::${s.keyType}) ORDER BY ${s.key} LIMIT $3`,
      [userKey, after, limit],
    );
    return page(
      rows.map((r) => view(r, s.numeric)),
      limit,
      (last) => last[s.keyField],
    );
  }

  /** Memories in id order, each with its full history (memory_events of that memory, in order). */
  private async memories(userKey: string, after: string | null, limit: number): Promise<ExportPage> {
    const memories = await this.keyed(SECTIONS.memories, userKey, after, limit);
    const ids = memories.rows.map((m) => m.id as string);
    const events = ids.length ? (await this.q.query(`SELECT ${EVENT_COLUMNS.join(', ')} FROM memory_events WHERE user_id = $1 AND memory_id = ANY($2::uuid[]) ORDER BY memory_id, id`, [userKey, ids])).rows.map((r) => view(r)) : [];
    const history = new Map<string, Row[]>();
    for (const e of events) history.set(e.memoryId as string, [...(history.get(e.memoryId as string) ?? []), e]);
    return { rows: memories.rows.map((m) => ({ ...m, history: history.get(m.id as string) ?? [] })), next: memories.next };
  }

  /**
   * Audit events that belong to no stored memory: decisions that created nothing (an ignored
   * statement, a forget request) and the text-free record of an erased memory. In two runs, each
   * an index range of memory_events (user_id, memory_id, id): memory_id NULL, then the rest.
   */
  private async otherEvents(userKey: string, after: OtherEventsKey | null, limit: number): Promise<ExportPage<OtherEventsKey>> {
    if (!after?.orphans) {
      const { rows } = await this.q.query(`SELECT ${EVENT_COLUMNS.join(', ')} FROM memory_events WHERE user_id = $1 AND memory_id IS NULL AND id > $2::bigint ORDER BY id LIMIT $3`, [
        userKey,
        after?.id ?? '0',
        limit,
      ]);
      const events = rows.map((r) => view(r));
      if (events.length === limit) return { rows: events, next: { orphans: false, memoryId: null, id: events[events.length - 1]!.id as string } };
      // Decisions done; continue with events of memories that no longer exist.
      return { rows: events, next: { orphans: true, memoryId: '00000000-0000-0000-0000-000000000000', id: '0' } };
    }
    const { rows } = await this.q.query(
      `SELECT ${EVENT_COLUMNS.map((c) => `e.${c}`).join(', ')} FROM memory_events e
        WHERE e.user_id = $1 AND e.memory_id IS NOT NULL AND (e.memory_id, e.id) > ($2::uuid, $3::bigint)
          AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.memory_id AND m.user_id = $1)
        ORDER BY e.memory_id, e.id LIMIT $4`,
      [userKey, after.memoryId, after.id, limit],
    );
    return page(
      rows.map((r) => view(r)),
      limit,
      (e) => ({ orphans: true, memoryId: e.memoryId as string, id: e.id as string }),
    );
  }

  /** Messages by conversation, in arrival order within each (index messages_conversation_seq_idx). */
  private async messages(userKey: string, after: MessageKey | null, limit: number): Promise<ExportPage<MessageKey>> {
    const { rows } = await this.q.query(
      `SELECT conversation_id, message_id, seq, role, content, said_at, received_at, truncated FROM messages
        WHERE user_id = $1 AND ($2::text IS NULL OR (conversation_id, seq) > ($2, $3::bigint))
        ORDER BY conversation_id, seq LIMIT $4`,
      [userKey, after?.conversationId ?? null, after?.seq ?? 0, limit],
    );
    return page(
      rows.map((r) => view(r, ['seq'])),
      limit,
      (m) => ({ conversationId: m.conversationId as string, seq: m.seq as number }),
    );
  }

  /** Entities with the memories that mention them. */
  private async entities(userKey: string, after: string | null, limit: number): Promise<ExportPage<string>> {
    const { rows } = await this.q.query(
      `SELECT e.id, e.name, e.kind,
              COALESCE((SELECT array_agg(me.memory_id ORDER BY me.memory_id) FROM memory_entities me WHERE me.entity_id = e.id), '{}') AS memory_ids, e.created_at
         FROM entities e WHERE e.user_id = $1 AND ($2::uuid IS NULL OR e.id > $2::uuid) ORDER BY e.id LIMIT $3`,
      [userKey, after, limit],
    );
    return page(
      rows.map((r) => view(r)),
      limit,
      (e) => e.id as string,
    );
  }

  private async relations(userKey: string, after: RelationKey | null, limit: number): Promise<ExportPage<RelationKey>> {
    const { rows } = await this.q.query(
      `SELECT r.source_id, s.name AS source, r.relation, r.target_id, t.name AS target, r.memory_id, r.created_at
         FROM relations r
         LEFT JOIN entities s ON s.id = r.source_id AND s.user_id = $1
         LEFT JOIN entities t ON t.id = r.target_id AND t.user_id = $1
        WHERE r.user_id = $1 AND ($2::uuid IS NULL OR (r.source_id, r.relation, r.target_id, r.memory_id) > ($2::uuid, $3::text, $4::uuid, $5::uuid))
        ORDER BY r.source_id, r.relation, r.target_id, r.memory_id LIMIT $6`,
      [userKey, after?.sourceId ?? null, after?.relation ?? '', after?.targetId ?? null, after?.memoryId ?? null, limit],
    );
    return page(
      rows.map((r) => view(r)),
      limit,
      (x) => ({ sourceId: x.sourceId as string, relation: x.relation as string, targetId: x.targetId as string, memoryId: x.memoryId as string }),
    );
  }
}

/**
 * Export snapshots over the pool: one REPEATABLE READ READ ONLY transaction on a connection of its
 * own, so the whole document is consistent. The export service reads it to a spool as fast as
 * PostgreSQL answers and closes it before the client downloads (src/privacy/user-export.ts).
 */
export class PostgresUserExportSource implements UserExportSource {
  constructor(private readonly pool: pg.Pool) {}

  async openSnapshot(input: { statementTimeoutMs?: number; idleTimeoutMs?: number } = {}): Promise<UserExportSnapshot> {
    const client = await this.pool.connect();
    // The server ends a session idle in the transaction past its limit; without a listener that
    // error would be thrown at the process. The next read fails instead, and the client is dropped.
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    const release = () => {
      client.off('error', onError);
      client.release(broken);
    };
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      // SET LOCAL: the limits end with this transaction, and the pooled connection goes back as it came.
      if (input.statementTimeoutMs) await client.query(`SET LOCAL statement_timeout = ${Math.floor(input.statementTimeoutMs)}`);
      if (input.idleTimeoutMs) await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${Math.floor(input.idleTimeoutMs)}`);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      release();
      throw err;
    }
    // Each read may run up to the export's statement_timeout: the client waits that long, and its
    // usual bound on top for the server's answer, so the server's cancel (57014) is what ends a slow
    // read, and only a server that does not answer at all is cut off from this side.
    const bound = input.statementTimeoutMs ? Math.floor(input.statementTimeoutMs) + (queryTimeoutOf(client) ?? 0) : undefined;
    const reads: Queryable = bound === undefined ? client : { query: ((text: string, values?: unknown[]) => boundedQuery(client, text, values, bound)) as Queryable['query'] };
    const reader = new PostgresExportRepository(reads);
    return {
      user: (input) => reader.user(input),
      profile: (input) => reader.profile(input),
      scenes: (input) => reader.scenes(input),
      page: (input) => reader.page(input),
      async close({ completed }) {
        try {
          await (completed ? client.query('COMMIT') : client.query('ROLLBACK').catch(() => {}));
        } finally {
          release();
        }
      },
    };
  }
}
