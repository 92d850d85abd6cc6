import type { EraseCounts, MemoryErasure } from '../../core/ports/privacy';
import type { MessageRef } from '../../core/recall/exchanges';
import type { Queryable } from './pool';
import { DELETE_MEMORY_POSTINGS } from './memory-repository';

/**
 * Hard erasure of one memory (DELETE …/memories/{id}?hard=true), inside the caller's user
 * transaction. Removes the row and everything that repeats its words: postings (and the user's
 * BM25 statistics), graph links and entities no other memory uses, its audit events (and the
 * memory-less decision rows of the same source messages, which quote the same words), its source
 * messages with their postings, digests that listed it or summarised the days of those messages,
 * and the notifications that carried those digests or a nudge about it. The vector is left to the
 * caller, with a pending delete in the outbox in case Chroma is unreachable. One text-free `erase`
 * event stays behind as the audit of the erasure. Undefined when the user has no such memory.
 */
export class PostgresMemoryErasure implements MemoryErasure {
  constructor(private readonly db: Queryable) {}

  async eraseMemory(input: { userKey: string; id: string; at: Date; actor: string }): Promise<{ counts: EraseCounts; conversations: string[]; messages: MessageRef[] } | undefined> {
    const c = this.db;
    const { userKey, id } = input;
    const found = await c.query<{ status: string; doc_length: number; text: string; source: { conversationId?: string; messageIds?: unknown } }>(
      'SELECT status, doc_length, text, source FROM memories WHERE user_id = $1 AND id = $2 FOR UPDATE',
      [userKey, id],
    );
    const memory = found.rows[0];
    if (!memory) return undefined;

    // Its source messages: the messages of the decisions that created, updated or restated it.
    // Per (conversation, message) — client message ids repeat across conversations. The memory's
    // own source column is the fallback (rows written without events).
    const fromEvents = await c.query<{ cid: string; mid: string }>(
      `SELECT DISTINCT conversation_id AS cid, unnest(message_ids) AS mid FROM memory_events
        WHERE user_id = $1 AND memory_id = $2 AND conversation_id IS NOT NULL AND action IN ('create', 'update', 'supersede', 'reinforce')`,
      [userKey, id],
    );
    let sources = fromEvents.rows;
    if (sources.length === 0 && typeof memory.source.conversationId === 'string' && Array.isArray(memory.source.messageIds)) {
      sources = memory.source.messageIds.filter((m): m is string => typeof m === 'string').map((mid) => ({ cid: memory.source.conversationId!, mid }));
    }
    const cids = sources.map((s) => s.cid);
    const mids = sources.map((s) => s.mid);

    const linked = await c.query<{ entity_id: string }>(
      'SELECT me.entity_id FROM memory_entities me JOIN memories m ON m.id = me.memory_id WHERE m.user_id = $1 AND me.memory_id = $2',
      [userKey, id],
    );
    await c.query('UPDATE memories SET supersedes = NULL WHERE user_id = $1 AND supersedes = $2', [userKey, id]);
    await c.query('UPDATE memories SET superseded_by = NULL WHERE user_id = $1 AND superseded_by = $2', [userKey, id]);
    await c.query(DELETE_MEMORY_POSTINGS, [userKey, id]);
    if (memory.status === 'active') {
      await c.query(
        'UPDATE user_index_stats SET doc_count = GREATEST(doc_count - 1, 0), total_length = GREATEST(total_length - $2, 0) WHERE user_id = $1',
        [userKey, memory.doc_length],
      );
    }
    await c.query('DELETE FROM relations WHERE user_id = $1 AND memory_id = $2', [userKey, id]);
    await c.query('DELETE FROM memory_entities me USING memories m WHERE m.id = me.memory_id AND m.user_id = $1 AND me.memory_id = $2', [userKey, id]);
    // Relation ends are linked too (PostgresMemoryGraph.link), so this covers "zorblax" in user —allergic_to→ zorblax.
    const entities = await c.query(
      `DELETE FROM entities e WHERE e.user_id = $1 AND e.id = ANY($2::uuid[])
          AND NOT EXISTS (SELECT 1 FROM memory_entities me WHERE me.entity_id = e.id)
          AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.source_id = e.id OR r.target_id = e.id)`,
      [userKey, linked.rows.map((r) => r.entity_id)],
    );
    const events = await c.query(
      `DELETE FROM memory_events e WHERE e.user_id = $1
          AND (e.memory_id = $2
               OR (e.memory_id IS NULL AND EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS s(cid, mid)
                                                    WHERE s.cid = e.conversation_id AND s.mid = ANY (e.message_ids))))`,
      [userKey, id, cids, mids],
    );
    const messages = await c.query<{ said_at: Date; conversation_id: string; message_id: string }>(
      `DELETE FROM messages m USING unnest($2::text[], $3::text[]) AS s(cid, mid)
        WHERE m.user_id = $1 AND m.conversation_id = s.cid AND m.message_id = s.mid
        RETURNING m.said_at, m.conversation_id, m.message_id`,
      [userKey, cids, mids],
    );
    // The exchange index paired the erased lines with their neighbours: re-index those
    // conversations, so every pair vector left is rebuilt from the lines that remain.
    await c.query('UPDATE conversations SET exchanges_indexed_seq = 0 WHERE user_id = $1 AND conversation_id = ANY($2::text[])', [userKey, cids]);
    // After the messages: the postings' delete trigger then takes them out of the statistics.
    const terms = await c.query(
      `DELETE FROM message_terms t USING unnest($2::text[], $3::text[]) AS s(cid, mid)
        WHERE t.user_id = $1 AND t.conversation_id = s.cid AND t.message_id = s.mid`,
      [userKey, cids, mids],
    );
    const digests = await c.query<{ date: string }>(
      `DELETE FROM digests d WHERE d.user_id = $1
          AND (d.sections -> 'importantMemories' @> jsonb_build_array(jsonb_build_object('id', $2::text))
               OR strpos(d.text, $3) > 0 OR strpos(d.sections::text, $3) > 0
               OR EXISTS (SELECT 1 FROM unnest($4::timestamptz[]) AS s(at) WHERE (s.at AT TIME ZONE d.time_zone)::date = d.digest_date))
        RETURNING to_char(d.digest_date, 'YYYY-MM-DD') AS date`,
      [userKey, id, memory.text, messages.rows.map((r) => r.said_at)],
    );
    const notifications = await c.query(
      `DELETE FROM notifications n WHERE n.user_id = $1
          AND ((n.kind = 'digest' AND n.data ->> 'date' = ANY ($2::text[])) OR n.data ->> 'memoryId' = $3 OR strpos(n.body, $4) > 0)`,
      [userKey, digests.rows.map((r) => r.date), id, memory.text],
    );
    await c.query(
      `INSERT INTO vector_outbox (memory_id, user_id, op, enqueued_at) VALUES ($1, $2, 'delete', clock_timestamp())
       ON CONFLICT (memory_id) DO UPDATE SET op = 'delete', enqueued_at = EXCLUDED.enqueued_at, attempts = 0, last_error = NULL`,
      [id, userKey],
    );
    // The persona and scene index quote or list the memory until their next (debounced) rebuild:
    // drop them now, so no copy of its words outlives the erase; the rebuild signalled by this
    // change writes them again from what is left, and recall goes without them meanwhile.
    await c.query('DELETE FROM user_profiles WHERE user_id = $1 AND ($2::uuid = ANY(memory_ids) OR strpos(text, $3) > 0)', [userKey, id, memory.text]);
    await c.query('DELETE FROM user_scenes WHERE user_id = $1 AND (strpos(scenes::text, $2) > 0 OR strpos(lines::text, $2) > 0 OR strpos(lines::text, $3) > 0)', [userKey, id, memory.text]);
    await c.query('DELETE FROM memories WHERE user_id = $1 AND id = $2', [userKey, id]);
    const counts: EraseCounts = {
      events: events.rowCount ?? 0,
      messages: messages.rowCount ?? 0,
      messageTerms: terms.rowCount ?? 0,
      entities: entities.rowCount ?? 0,
      digests: digests.rowCount ?? 0,
      notifications: notifications.rowCount ?? 0,
    };
    await c.query(
      `INSERT INTO memory_events (user_id, memory_id, action, reason, after, actor, created_at)
       VALUES ($1, $2, 'erase', 'erased on request: the memory, its history, its source messages and what repeated their words were deleted', $3, $4, $5)`,
      [userKey, id, JSON.stringify({ removed: counts }), input.actor, input.at],
    );
    return { counts, conversations: [...new Set(cids)].sort(), messages: messages.rows.map((r) => ({ conversationId: r.conversation_id, messageId: r.message_id })) };
  }

  /** Clears the pending vector delete of an erased memory once Chroma confirmed it. */
  async vectorErased({ userKey, id }: { userKey: string; id: string }): Promise<void> {
    await this.db.query(`DELETE FROM vector_outbox WHERE user_id = $1 AND memory_id = $2 AND op = 'delete'`, [userKey, id]);
  }
}
