import type { ImportancePatch, MemoryRepository, NewMemory } from '../../core/ports/memory';
import type { ImportanceLevel, Memory, MemoryScope, MemorySource, MemoryStatus, MemoryType, MemoryVia } from '../../core/types';
import { termFrequencies } from '../../core/text/tokenize';
import { bm25Ctes, bm25TermSql, bm25TopCtes } from './bm25-sql';
import type { Queryable } from './pool';
import { bind, prepared } from './prepared';

export interface MemoryRow {
  id: string;
  user_id: string;
  text: string;
  type: MemoryType;
  status: MemoryStatus;
  scope: MemoryScope;
  confidence: number;
  importance: number;
  importance_level: ImportanceLevel;
  frequency_count: number;
  decay_score: number;
  emotion_tags: string[];
  associated_topics: string[];
  keywords: string[];
  source: MemorySource;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  last_recalled_at: Date | null;
  last_accessed_at: Date;
  expires_at: Date | null;
  supersedes: string | null;
  superseded_by: string | null;
  via: MemoryVia;
  pending: boolean;
}

export function rowToMemory(r: MemoryRow): Memory {
  return {
    id: r.id,
    userId: r.user_id,
    text: r.text,
    type: r.type,
    status: r.status,
    scope: r.scope,
    confidence: r.confidence,
    importance: r.importance,
    importanceLevel: r.importance_level,
    frequencyCount: r.frequency_count,
    decayScore: r.decay_score,
    emotionTags: r.emotion_tags,
    associatedTopics: r.associated_topics,
    keywords: r.keywords,
    source: r.source,
    metadata: r.metadata,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastRecalledAt: r.last_recalled_at,
    lastAccessedAt: r.last_accessed_at,
    expiresAt: r.expires_at,
    supersedes: r.supersedes,
    supersededBy: r.superseded_by,
    via: r.via,
    pending: r.pending,
  };
}

export const COLUMNS = `id, user_id, text, type, status, scope, confidence, importance, importance_level, frequency_count,
  decay_score, emotion_tags, associated_topics, keywords, source, metadata, created_at, updated_at,
  last_recalled_at, last_accessed_at, expires_at, supersedes, superseded_by, via, pending`;

/** {@link PostgresMemoryRepository.getActive}'s statement, named (prepared.ts): recall runs it for the ANN ids on every request. */
const GET_ACTIVE = prepared(
  `SELECT m.* FROM unnest($2::uuid[]) AS i(id)
     CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM memories x WHERE x.id = i.id OFFSET 0) m
    WHERE m.user_id = $1 AND m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > COALESCE($3::timestamptz, now()))`,
);

/**
 * PostgreSQL persistence of memories and their BM25 postings. Every query takes a user id and
 * filters by it; postings exist only for active memories, so a search can never see dead ones.
 * Built around a pool for reads, or around a transaction's client by the unit of work (writes
 * take several statements and only run there).
 */
export class PostgresMemoryRepository implements MemoryRepository {
  constructor(private readonly db: Queryable) {}

  async insert(m: NewMemory): Promise<boolean> {
    const c = this.db;
    const tf = termFrequencies(m.tokens);
    const inserted = await c.query(
      `INSERT INTO memories (id, user_id, text, normalized_text, type, status, scope, confidence, importance,
         importance_level, importance_components, frequency_count, decay_score, emotion_tags, associated_topics,
         keywords, source, metadata, doc_length, created_at, updated_at, last_recalled_at, last_accessed_at,
         expires_at, supersedes, via, pending)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27)
       ON CONFLICT (id) DO NOTHING`,
      [
        m.id, m.userId, m.text, m.normalizedText, m.type, m.status, m.scope, m.confidence, m.importance,
        m.importanceLevel, JSON.stringify(m.importanceComponents), m.frequencyCount, m.decayScore, m.emotionTags,
        m.associatedTopics, m.keywords, JSON.stringify(m.source), JSON.stringify(m.metadata), m.tokens.length,
        m.createdAt, m.updatedAt, m.lastRecalledAt, m.lastAccessedAt, m.expiresAt, m.supersedes, m.via, m.pending,
      ],
    );
    if (!inserted.rowCount) return false;
    if (m.status === 'active') await indexPostings(c, m.userId, m.id, tf, m.tokens.length);
    await enqueueVectorOp(c, m.userId, m.id, m.status === 'active' ? 'upsert' : 'delete');
    return true;
  }

  async get({ userId, id }: { userId: string; id: string }): Promise<Memory | undefined> {
    const { rows } = await this.db.query<MemoryRow>(`SELECT ${COLUMNS} FROM memories WHERE user_id = $1 AND id = $2`, [userId, id]);
    return rows[0] ? rowToMemory(rows[0]) : undefined;
  }

  /** Active memories among `ids`, for hydrating search hits; order is not preserved. */
  async getActive({ userId, ids, now }: { userId: string; ids: string[]; now?: Date }): Promise<Memory[]> {
    if (ids.length === 0) return [];
    // One primary-key probe per id: the lateral holds only the id, so the planner cannot read the
    // user's memories by user_id instead (it did for a never-analyzed user: 8 ms at 10k for 20 ids).
    const { rows } = await this.db.query<MemoryRow>(bind(GET_ACTIVE, [userId, [...new Set(ids)], now ?? null]));
    return rows.map(rowToMemory);
  }

  async findActiveByNormalized({ userId, normalized }: { userId: string; normalized: string }): Promise<Memory | undefined> {
    const { rows } = await this.db.query<MemoryRow>(
      `SELECT ${COLUMNS} FROM memories WHERE user_id = $1 AND normalized_text = $2 AND status = 'active' LIMIT 1`,
      [userId, normalized],
    );
    return rows[0] ? rowToMemory(rows[0]) : undefined;
  }

  /** The user's most recently archived memory with exactly this normalised text, if any. */
  async findArchivedByNormalized({ userId, normalized }: { userId: string; normalized: string }): Promise<Memory | undefined> {
    const { rows } = await this.db.query(
      `SELECT * FROM memories WHERE user_id = $1 AND status = 'archived' AND normalized_text = $2 ORDER BY archived_at DESC NULLS LAST, id LIMIT 1`,
      [userId, normalized],
    );
    return rows[0] ? rowToMemory(rows[0]) : undefined;
  }

  /**
   * BM25 over the user's active memories, computed in SQL from the postings so nothing is rebuilt
   * per query. Returns ids best first. Postings exist only for active memories (every status
   * change adds or removes them in its own transaction), and each carries its memory's length,
   * so an unfiltered search reads no memory row and a bounded number of postings
   * ({@link bm25TopCtes}). A type filter joins each posting to its memory and reads every posting
   * of the query terms, so the cut per term cannot drop a memory the filter keeps.
   */
  async bm25({ userId, tokens, k, types }: { userId: string; tokens: string[]; k: number; types?: MemoryType[] }): Promise<{ id: string; score: number }[]> {
    const tf = termFrequencies(tokens);
    if (tf.size === 0) return [];
    const tables = { postings: 'memory_terms', stats: 'user_index_stats', df: 'memory_term_df' } as const;
    const terms = [...tf.keys()];
    if (types === undefined || types.length === 0) {
      const { rows } = await this.db.query<{ id: string; score: number }>(
        `WITH ${bm25TopCtes(tables, '$3')}
         SELECT memory_id AS id, score FROM top ORDER BY score DESC, memory_id LIMIT $3`,
        [userId, terms, k],
      );
      return rows;
    }
    const { rows } = await this.db.query<{ id: string; score: number }>(
      `WITH ${bm25Ctes(tables, { allPostings: true })}
       SELECT t.memory_id AS id, sum(${bm25TermSql('t.doc_length')})::float8 AS score
         FROM postings t
         JOIN df USING (term)
         JOIN memories m ON m.id = t.memory_id AND m.user_id = $1 AND m.status = 'active' AND m.type = ANY($4::text[])
         CROSS JOIN stats
        GROUP BY t.memory_id
        ORDER BY score DESC, t.memory_id
        LIMIT $3`,
      [userId, terms, k, types],
    );
    return rows;
  }

  /** Recently touched and important active memories (the "上次/最近/last time" route). */
  async recent({ userId, k, types }: { userId: string; k: number; types?: MemoryType[] }): Promise<string[]> {
    // Through recall_recent (migration 1797500000000): the first k of the ordered index, whatever
    // the statistics say (on never-analyzed rows the planner read and sorted all 10k of a user's memories).
    const { rows } = await this.db.query<{ id: string }>('SELECT id FROM recall_recent($1, $3::text[], $2)', [userId, k, types && types.length > 0 ? types : null]);
    return rows.map((r) => r.id);
  }

  /** The user's most important active memories, standing instructions aside (the importance route). */
  async mostImportant({ userId, k, ...opts }: { userId: string; k: number; types?: MemoryType[]; now?: Date; minImportance: number }): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT id FROM memories
        WHERE user_id = $1 AND status = 'active' AND type <> 'instruction' AND importance >= $5
          AND ($3::text[] IS NULL OR type = ANY($3::text[]))
          AND (expires_at IS NULL OR expires_at > COALESCE($4::timestamptz, now()))
        ORDER BY importance DESC, updated_at DESC
        LIMIT $2`,
      [userId, k, opts.types && opts.types.length > 0 ? opts.types : null, opts.now ?? null, opts.minImportance],
    );
    return rows.map((r) => r.id);
  }

  /** Active memories of the given types, most important first (the type/metadata route). */
  async byTypes({ userId, types, k, ...opts }: { userId: string; types: MemoryType[]; k: number; scope?: MemoryScope; now?: Date }): Promise<Memory[]> {
    if (opts.scope === undefined) {
      // Each type's best k straight from its ordered index (recall_top_by_type, migration
      // 1797400000000): on never-analyzed rows the statement below read every memory of the types and sorted them.
      const { rows } = await this.db.query<MemoryRow>(
        `SELECT ${COLUMNS} FROM recall_top_by_type($1, $2::text[], '-Infinity'::real, COALESCE($4::timestamptz, now()), true, $3)
          ORDER BY importance DESC, updated_at DESC
          LIMIT $3`,
        [userId, types, k, opts.now ?? null],
      );
      return rows.map(rowToMemory);
    }
    const { rows } = await this.db.query<MemoryRow>(
      `SELECT ${COLUMNS} FROM memories
        WHERE user_id = $1 AND status = 'active' AND type = ANY($2::text[]) AND ($4::text IS NULL OR scope = $4) AND NOT pending
          AND (expires_at IS NULL OR expires_at > COALESCE($5::timestamptz, now()))
        ORDER BY importance DESC, updated_at DESC
        LIMIT $3`,
      [userId, types, k, opts.scope ?? null, opts.now ?? null],
    );
    return rows.map(rowToMemory);
  }

  async list({ userId, ...opts }: { userId: string; status?: MemoryStatus; type?: MemoryType; limit: number; offset: number }): Promise<{ memories: Memory[]; total: number }> {
    const q = this.db;
    const params = [userId, opts.status ?? null, opts.type ?? null];
    const [{ rows }, count] = await Promise.all([
      q.query<MemoryRow>(
        `SELECT ${COLUMNS} FROM memories
          WHERE user_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR type = $3)
          ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`,
        [...params, opts.limit, opts.offset],
      ),
      q.query<{ n: string }>(
        `SELECT count(*) AS n FROM memories WHERE user_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR type = $3)`,
        params,
      ),
    ]);
    return { memories: rows.map(rowToMemory), total: Number(count.rows[0]?.n ?? 0) };
  }

  /** The memory, locked for a status change by the API (the sweep then skips it). */
  async lock({ userId, id }: { userId: string; id: string }): Promise<Memory | undefined> {
    const { rows } = await this.db.query(`SELECT * FROM memories WHERE user_id = $1 AND id = $2 FOR UPDATE`, [userId, id]);
    return rows[0] ? rowToMemory(rows[0]) : undefined;
  }

  /** Moves a memory to another status, keeping postings and the vector outbox in step. */
  async setStatus({
    userId,
    id,
    status,
    at,
    ...extra
  }: {
    userId: string;
    id: string;
    status: MemoryStatus;
    at: Date;
    supersededBy?: string;
    /** Needed when the memory becomes active again. */
    tokens?: string[];
  }): Promise<Memory | undefined> {
    const c = this.db;
    const { rows } = await c.query<MemoryRow & { doc_length: number; text: string; keywords: string[]; prev: MemoryStatus }>(
      `UPDATE memories m SET status = $3::text, updated_at = GREATEST(m.updated_at, $4::timestamptz),
              superseded_by = COALESCE($5::uuid, m.superseded_by),
              archived_at = CASE WHEN $3::text = 'archived' THEN $4::timestamptz ELSE NULL END,
              last_accessed_at = CASE WHEN $3::text = 'active' THEN $4::timestamptz ELSE m.last_accessed_at END
         FROM (SELECT status AS prev FROM memories WHERE user_id = $1 AND id = $2 FOR UPDATE) p
        WHERE m.user_id = $1 AND m.id = $2
        RETURNING ${COLUMNS.split(',').map((col) => `m.${col.trim()}`).join(', ')}, m.doc_length, p.prev`,
      [userId, id, status, at, extra.supersededBy ?? null],
    );
    const row = rows[0];
    if (!row) return undefined;
    if (row.prev === 'active' && status !== 'active') {
      await unindexPostings(c, userId, id, row.doc_length);
      await enqueueVectorOp(c, userId, id, 'delete');
    } else if (row.prev !== 'active' && status === 'active') {
      const tokens = extra.tokens ?? [];
      await c.query('UPDATE memories SET doc_length = $3 WHERE user_id = $1 AND id = $2', [userId, id, tokens.length]);
      await indexPostings(c, userId, id, termFrequencies(tokens), tokens.length);
      await enqueueVectorOp(c, userId, id, 'upsert');
    }
    return rowToMemory(row);
  }

  async reinforce({
    userId,
    id,
    ...patch
  }: { userId: string; id: string; at: Date; recalled: boolean; emotionTags?: string[]; messageIds?: string[] } & ImportancePatch): Promise<Memory | undefined> {
    const { rows } = await this.db.query<MemoryRow>(
      `UPDATE memories SET frequency_count = frequency_count + 1,
              last_accessed_at = GREATEST(last_accessed_at, $3),
              last_recalled_at = CASE WHEN $7 THEN GREATEST(COALESCE(last_recalled_at, $3), $3) ELSE last_recalled_at END,
              updated_at = GREATEST(updated_at, $3),
              importance = $4, importance_level = $5, importance_components = $6, decay_score = 1,
              emotion_tags = (SELECT ARRAY(SELECT DISTINCT unnest(emotion_tags || $8::text[]))),
              source = CASE WHEN $9::text[] IS NULL THEN source
                            ELSE jsonb_set(source, '{messageIds}', to_jsonb(ARRAY(SELECT DISTINCT unnest(
                              ARRAY(SELECT jsonb_array_elements_text(COALESCE(source->'messageIds', '[]'::jsonb))) || $9::text[]))))
                       END
        WHERE user_id = $1 AND id = $2
        RETURNING ${COLUMNS}`,
      [userId, id, patch.at, patch.importance, patch.importanceLevel, JSON.stringify(patch.components), patch.recalled, patch.emotionTags ?? [], patch.messageIds ?? null],
    );
    return rows[0] ? rowToMemory(rows[0]) : undefined;
  }

  /** Sets importance and decay after a restore (the status change itself goes through setStatus). */
  async setImportance({ userId, id, ...patch }: { userId: string; id: string } & ImportancePatch): Promise<void> {
    await this.db.query(
      `UPDATE memories SET importance = $3, importance_level = $4, importance_components = $5, decay_score = 1 WHERE user_id = $1 AND id = $2`,
      [userId, id, patch.importance, patch.importanceLevel, JSON.stringify(patch.components)],
    );
  }

  async confirm({ userId, id, at }: { userId: string; id: string; at: Date }): Promise<Memory | undefined> {
    const { rows } = await this.db.query<MemoryRow>(
      `UPDATE memories SET pending = false, updated_at = GREATEST(updated_at, $3) WHERE user_id = $1 AND id = $2 AND pending RETURNING ${COLUMNS}`,
      [userId, id, at],
    );
    return rows[0] ? rowToMemory(rows[0]) : undefined;
  }

  async linkSupersedes({ userId, newId, oldId }: { userId: string; newId: string; oldId: string }): Promise<void> {
    await this.db.query('UPDATE memories SET supersedes = $3 WHERE user_id = $1 AND id = $2', [userId, newId, oldId]);
  }
}

async function indexPostings(c: Queryable, userId: string, id: string, tf: Map<string, number>, docLength: number): Promise<void> {
  if (tf.size > 0) {
    await c.query(
      `INSERT INTO memory_terms (user_id, term, memory_id, tf, doc_length)
       SELECT $1, t, $2, f, $5 FROM unnest($3::text[], $4::int[]) AS x(t, f)
       ON CONFLICT DO NOTHING`,
      [userId, id, [...tf.keys()], [...tf.values()], docLength],
    );
  }
  await c.query(
    `INSERT INTO user_index_stats (user_id, doc_count, total_length) VALUES ($1, 1, $2)
     ON CONFLICT (user_id) DO UPDATE SET doc_count = user_index_stats.doc_count + 1,
                                         total_length = user_index_stats.total_length + EXCLUDED.total_length`,
    [userId, docLength],
  );
}

/**
 * A memory's postings, found by its id alone (memory_terms_memory_idx) and scoped to the user
 * through its row. Named with the user on the postings too, the primary key (user_id, term,
 * memory_id) becomes a candidate, and on tables never analysed the planner took it and walked the
 * user's whole range of postings: 1,322 pages to archive one memory of a 10k-memory user
 * (test/never-analyzed-plans.int.test.ts).
 */
export const DELETE_MEMORY_POSTINGS = 'DELETE FROM memory_terms t USING memories m WHERE m.user_id = $1 AND m.id = $2 AND t.memory_id = m.id';

async function unindexPostings(c: Queryable, userId: string, id: string, docLength: number): Promise<void> {
  await c.query(DELETE_MEMORY_POSTINGS, [userId, id]);
  await c.query(
    `UPDATE user_index_stats SET doc_count = GREATEST(doc_count - 1, 0), total_length = GREATEST(total_length - $2, 0)
      WHERE user_id = $1`,
    [userId, docLength],
  );
}

async function enqueueVectorOp(c: Queryable, userId: string, id: string, op: 'upsert' | 'delete'): Promise<void> {
  await c.query(
    `INSERT INTO vector_outbox (memory_id, user_id, op, enqueued_at) VALUES ($1, $2, $3, clock_timestamp())
     ON CONFLICT (memory_id) DO UPDATE SET op = EXCLUDED.op, enqueued_at = EXCLUDED.enqueued_at, attempts = 0, last_error = NULL`,
    [id, userId, op],
  );
}
