import type { MessageHit, MessageRef, ShownLine, StoredLine } from '../../core/recall/exchanges';
import type { MessageSearch } from '../../core/ports/recall';
import { termFrequencies } from '../../core/text/tokenize';
import { bm25Ctes, bm25TermSql, bm25TopCtes } from './bm25-sql';
import type { Queryable } from './pool';

export type { MessageHit, MessageRef, ShownLine } from '../../core/recall/exchanges';

interface LineRow {
  conversation_id: string;
  message_id: string;
  seq: string;
  role: StoredLine['role'];
  content: string;
  said_at: Date;
}

function toLine(r: LineRow): StoredLine {
  return { conversationId: r.conversation_id, messageId: r.message_id, seq: Number(r.seq), role: r.role, content: r.content, at: r.said_at };
}

/** Per-user collection statistics and document frequencies of the query terms ($1 user, $2 terms). */
const BM25_TABLES = { postings: 'message_terms', stats: 'message_index_stats', df: 'message_term_df' } as const;
const BM25_TOP = bm25TopCtes(BM25_TABLES, '$3', { matched: true });
/** Every posting of the query terms: the time route scores only the messages of its days, which the cut per term must not lose. */
const BM25_CTES_ALL_POSTINGS = bm25Ctes(BM25_TABLES, { allPostings: true });
/** One term's Okapi BM25 contribution, the same definition as every other index. */
const BM25_TERM = bm25TermSql('t.doc_length');
/**
 * Forget requests of user $1: the decision rows of "忘掉…/forget…" candidates, whether they
 * expired memories (action forget, affectedIds) or named nothing stored (ignored). The predicate
 * matches the partial index memory_events_forget_idx.
 */
const FORGET_EVENTS = `SELECT conversation_id, message_ids, after FROM memory_events
                        WHERE user_id = $1 AND (action = 'forget' OR (action = 'ignore' AND reason LIKE 'forget request%'))`;
/** A day with more messages than this is read from its start; the words route covers the rest. */
const MAX_MESSAGES_IN_RANGE = 2000;

const rangeArrays = (ranges: readonly { start: Date; end: Date }[]): [Date[], Date[]] => [ranges.map((r) => r.start), ranges.map((r) => r.end)];

/**
 * Search over the user's raw messages (L0): BM25 over `message_terms` with per-user statistics
 * kept by triggers (migration 1764461100000), messages said in a date range, the neighbours that
 * make a message an exchange, and which messages must stay hidden. Every query takes the user.
 */
export class PostgresMessageSearch implements MessageSearch {
  constructor(private readonly db: Queryable) {}

  /**
   * BM25 over the user's messages, best first. Document frequencies come from message_term_df;
   * each posting carries its message's length, and every path that deletes a message deletes its
   * postings in the same statement or transaction (retention, erase, purge), so no message row is read.
   */
  async bm25({ userId, tokens, k }: { userId: string; tokens: string[]; k: number }): Promise<MessageHit[]> {
    const terms = [...termFrequencies(tokens).keys()];
    if (terms.length === 0) return [];
    const { rows } = await this.db.query<{ conversation_id: string; message_id: string; score: number; matched: string[] }>(
      `WITH ${BM25_TOP}
       SELECT conversation_id, message_id, score, matched FROM top
        ORDER BY score DESC, conversation_id, message_id
        LIMIT $3`,
      [userId, terms, k],
    );
    return rows.map((r) => ({ conversationId: r.conversation_id, messageId: r.message_id, score: r.score, matched: r.matched }));
  }

  /**
   * Messages said inside the ranges (the time route): those that match the query's words first,
   * by BM25, then the rest of those days in the order they were said. One round trip.
   */
  async saidIn({ userId, tokens, ranges, k }: { userId: string; tokens: string[]; ranges: readonly { start: Date; end: Date }[]; k: number }): Promise<MessageHit[]> {
    if (ranges.length === 0) return [];
    const [starts, ends] = rangeArrays(ranges);
    const { rows } = await this.db.query<{ conversation_id: string; message_id: string; score: number | null; matched: string[] | null }>(
      `WITH ${BM25_CTES_ALL_POSTINGS},
            inside AS (
              SELECT DISTINCT m.conversation_id, m.message_id, m.seq, m.said_at, m.doc_length
                FROM unnest($4::timestamptz[], $5::timestamptz[]) AS r(s, x)
                JOIN messages m ON m.user_id = $1 AND m.said_at >= r.s AND m.said_at < r.x
               ORDER BY m.said_at, m.seq
               LIMIT ${MAX_MESSAGES_IN_RANGE}),
            scored AS (
              SELECT m.conversation_id, m.message_id, sum(${BM25_TERM})::float8 AS score, array_agg(t.term) AS matched
                FROM inside m
                JOIN postings t ON t.conversation_id = m.conversation_id AND t.message_id = m.message_id
                JOIN df ON df.term = t.term
                CROSS JOIN stats
               GROUP BY m.conversation_id, m.message_id)
       SELECT i.conversation_id, i.message_id, s.score, s.matched
         FROM inside i LEFT JOIN scored s USING (conversation_id, message_id)
        ORDER BY s.score DESC NULLS LAST, i.said_at, i.seq
        LIMIT $3`,
      [userId, [...termFrequencies(tokens).keys()], k, starts, ends],
    );
    return rows.map((r) => ({ conversationId: r.conversation_id, messageId: r.message_id, score: r.score ?? 0, matched: r.matched ?? [] }));
  }

  /**
   * The given messages with the message right before and right after each in its conversation
   * (pairing a question with its answer needs them), each line flagged `hidden` when it must not
   * be shown: the user asked to forget it (the forget request itself, or the source of a memory
   * it expired) or, with `staleSources`, it is the source of a memory that was superseded,
   * expired or archived — stale unless the user asks about the past. One round trip.
   */
  async withNeighbours({
    userId,
    refs,
    staleSources,
    now,
  }: {
    userId: string;
    refs: readonly MessageRef[];
    staleSources: boolean;
    now: Date;
  }): Promise<{ anchor: ShownLine; previous?: ShownLine; next?: ShownLine }[]> {
    if (refs.length === 0) return [];
    const { rows } = await this.db.query<LineRow & { anchor_conversation_id: string; anchor_message_id: string; position: number; hidden: boolean }>(
      `WITH a AS (
              -- One primary-key probe per line: as a join, rows never analyzed had all of the
              -- user's messages read and hashed against the lines (2,332 messages: 2.9 ms).
              SELECT m.conversation_id, m.message_id, m.seq
                FROM unnest($2::text[], $3::text[]) AS x(cid, mid)
                CROSS JOIN LATERAL (SELECT conversation_id, message_id, seq FROM messages
                                     WHERE user_id = $1 AND conversation_id = x.cid AND message_id = x.mid OFFSET 0) m),
            forget AS (${FORGET_EVENTS}),
            forgotten AS (SELECT DISTINCT (jsonb_array_elements_text(after -> 'affectedIds'))::uuid AS id
                            FROM forget WHERE jsonb_typeof(after -> 'affectedIds') = 'array'),
            -- The lines whose memories must stay hidden, read in one pass over the user's memories of
            -- these conversations: checked per line, a user's memories were scanned once per line
            -- (50 lines × 10k memories: 430 ms of a 431 ms statement on never-analyzed rows).
            hidden_sources AS MATERIALIZED (
              SELECT DISTINCT m.source ->> 'conversationId' AS conversation_id, mid AS message_id
                FROM memories m
                CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(m.source -> 'messageIds') = 'array' THEN m.source -> 'messageIds' ELSE '[]'::jsonb END) AS mid
               WHERE m.user_id = $1 AND m.source ->> 'conversationId' = ANY($2::text[])
                 AND (m.id IN (SELECT id FROM forgotten)
                      OR ($4 AND (m.status <> 'active' OR (m.expires_at IS NOT NULL AND m.expires_at <= $5))))),
            lines AS (
              SELECT a.conversation_id AS anchor_conversation_id, a.message_id AS anchor_message_id, n.*
                FROM a CROSS JOIN LATERAL (
                  SELECT 0 AS position, conversation_id, message_id, seq, role, content, said_at FROM messages
                   WHERE user_id = $1 AND conversation_id = a.conversation_id AND message_id = a.message_id
                  UNION ALL
                  (SELECT -1, conversation_id, message_id, seq, role, content, said_at FROM messages
                    WHERE user_id = $1 AND conversation_id = a.conversation_id AND seq < a.seq ORDER BY seq DESC LIMIT 1)
                  UNION ALL
                  (SELECT 1, conversation_id, message_id, seq, role, content, said_at FROM messages
                    WHERE user_id = $1 AND conversation_id = a.conversation_id AND seq > a.seq ORDER BY seq LIMIT 1)
                ) n)
       SELECT l.*,
              (EXISTS (SELECT 1 FROM forget f WHERE f.conversation_id = l.conversation_id AND l.message_id = ANY (f.message_ids))
               OR EXISTS (SELECT 1 FROM hidden_sources h WHERE h.conversation_id = l.conversation_id AND h.message_id = l.message_id)) AS hidden
         FROM lines l`,
      [userId, refs.map((r) => r.conversationId), refs.map((r) => r.messageId), staleSources, now],
    );
    const byAnchor = new Map<string, { anchor?: ShownLine; previous?: ShownLine; next?: ShownLine }>();
    for (const r of rows) {
      const key = `${r.anchor_conversation_id}\u0000${r.anchor_message_id}`;
      const entry = byAnchor.get(key) ?? {};
      const line = { ...toLine(r), hidden: r.hidden };
      if (r.position === 0) entry.anchor = line;
      else if (r.position < 0) entry.previous = line;
      else entry.next = line;
      byAnchor.set(key, entry);
    }
    return [...byAnchor.values()].flatMap((e) => (e.anchor ? [{ anchor: e.anchor, previous: e.previous, next: e.next }] : []));
  }

  /** Every message of the user that a forget request covers (to rebuild episodes built before it). */
  async forgotten({ userId }: { userId: string }): Promise<MessageRef[]> {
    const { rows } = await this.db.query<{ cid: string; mid: string }>(
      `WITH forget AS (${FORGET_EVENTS})
       SELECT conversation_id AS cid, unnest(message_ids) AS mid FROM forget WHERE conversation_id IS NOT NULL
       UNION
       SELECT m.source ->> 'conversationId', jsonb_array_elements_text(m.source -> 'messageIds')
         FROM memories m
        WHERE m.user_id = $1 AND jsonb_typeof(m.source -> 'messageIds') = 'array' AND m.source ? 'conversationId'
          AND m.id IN (SELECT (jsonb_array_elements_text(after -> 'affectedIds'))::uuid FROM forget
                        WHERE jsonb_typeof(after -> 'affectedIds') = 'array')`,
      [userId],
    );
    return rows.map((r) => ({ conversationId: r.cid, messageId: r.mid }));
  }
}
