import type pg from 'pg';
import { termFrequencies } from '../../src/core/text/tokenize';
import { tokenizeForIndex } from '../../src/adapters/text/jieba';
import type { ImportanceLevel, MemoryStatus, MemoryType } from '../../src/core/types';

/** A memory row as a lifecycle test needs it; everything else gets a plain default. */
export interface BulkMemory {
  id: string;
  userId: string;
  text: string;
  type: MemoryType;
  status: MemoryStatus;
  importance: number;
  importanceLevel: ImportanceLevel;
  lastAccessedAt: Date;
  expiresAt: Date | null;
}

/**
 * Inserts thousands of memories in a few statements, with the same side data the write path keeps
 * for active ones (BM25 postings from the shared tokenizer, per-user index statistics) and the
 * owning users. For lifecycle tests that need volume, not extraction.
 */
export async function insertBulkMemories(pool: pg.Pool, memories: BulkMemory[], tenantId = 'tenant-a'): Promise<void> {
  const rows = memories.map((m) => {
    const tokens = tokenizeForIndex(m.text);
    return { ...m, tokens, docLength: tokens.length };
  });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`INSERT INTO users (user_id, tenant_id, external_id) SELECT DISTINCT u, $2, 'seed:' || u FROM unnest($1::text[]) AS u ON CONFLICT DO NOTHING`, [
      [...new Set(rows.map((r) => r.userId))],
      tenantId,
    ]);
    await client.query(
      `INSERT INTO memories (id, user_id, text, normalized_text, type, status, scope, confidence, importance, importance_level,
         importance_components, frequency_count, decay_score, doc_length, created_at, updated_at, last_accessed_at, expires_at,
         archived_at, source)
       SELECT x.id, x."userId", x.text, lower(x.text), x.type, x.status, 'global', 0.9, x.importance, x."importanceLevel",
              '{}'::jsonb, 1, 1, x."docLength", x."lastAccessedAt", x."lastAccessedAt", x."lastAccessedAt", x."expiresAt",
              CASE WHEN x.status = 'archived' THEN x."lastAccessedAt" END, '{"via":"api","role":"user"}'::jsonb
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, "userId" text, text text, type text, status text, importance real,
              "importanceLevel" text, "docLength" int, "lastAccessedAt" timestamptz, "expiresAt" timestamptz)`,
      [JSON.stringify(rows.map(({ tokens: _t, ...r }) => r))],
    );
    const active = rows.filter((r) => r.status === 'active');
    const postings = active.flatMap((r) => [...termFrequencies(r.tokens)].map(([term, tf]) => ({ userId: r.userId, term, memoryId: r.id, tf, docLength: r.docLength })));
    await client.query(
      `INSERT INTO memory_terms (user_id, term, memory_id, tf, doc_length)
       SELECT "userId", term, "memoryId", tf, "docLength" FROM jsonb_to_recordset($1::jsonb) AS x("userId" text, term text, "memoryId" uuid, tf int, "docLength" int)`,
      [JSON.stringify(postings)],
    );
    await client.query(
      `INSERT INTO user_index_stats (user_id, doc_count, total_length)
       SELECT "userId", count(*), sum("docLength") FROM jsonb_to_recordset($1::jsonb) AS x("userId" text, "docLength" int) GROUP BY "userId"
       ON CONFLICT (user_id) DO UPDATE SET doc_count = user_index_stats.doc_count + EXCLUDED.doc_count,
                                           total_length = user_index_stats.total_length + EXCLUDED.total_length`,
      [JSON.stringify(active.map((r) => ({ userId: r.userId, docLength: r.docLength })))],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}
