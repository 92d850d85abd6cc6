import type pg from 'pg';
import type { Episode, EpisodeVectorOwed, EpisodeWrite } from '../../core/episodes/ports';
import type { EpisodeDraft } from '../../core/episodes/summarize';
import type { EpisodeStore } from '../../core/ports/recall';
import { episodeId, shortHash } from '../../shared/ids';
import { termFrequencies } from '../../core/text/tokenize';
import { tokenizeForIndex } from '../text/jieba';
import { bm25TopCtes } from './bm25-sql';
import { inUserTransaction } from './pool';

export type { Episode, EpisodeWrite } from '../../core/episodes/ports';

interface EpisodeRow {
  id: string;
  user_id: string;
  conversation_id: string;
  day: string;
  time_zone: string;
  started_at: Date;
  ended_at: Date;
  summary: string;
  message_ids: string[];
  summary_message_ids: string[];
}

/** Episode columns of table alias `a`, the day as text (a DATE would come back as a local-midnight Date). */
const columns = (a: string): string =>
  `${a}.id, ${a}.user_id, ${a}.conversation_id, to_char(${a}.day, 'YYYY-MM-DD') AS day, ${a}.time_zone, ${a}.started_at, ${a}.ended_at, ${a}.summary, ${a}.message_ids, ${a}.summary_message_ids`;

function toEpisode(r: EpisodeRow): Episode {
  return {
    id: r.id,
    userId: r.user_id,
    conversationId: r.conversation_id,
    day: r.day,
    timeZone: r.time_zone,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    summary: r.summary,
    messageIds: r.message_ids,
    summaryMessageIds: r.summary_message_ids,
  };
}

export { episodeId };

/**
 * Episodes and their BM25 postings. Every query takes the user; postings and the per-user
 * statistics change in the same transaction as the episode row.
 */
export class PostgresEpisodeStore implements EpisodeStore {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Makes the conversation's stored episodes equal to `drafts`: upserts by deterministic id,
   * re-indexes only what changed, and removes episodes that are no longer produced.
   */
  async replaceForConversation(input: {
    userId: string;
    conversationId: string;
    timeZone: string;
    drafts: EpisodeDraft[];
    workflowId?: string;
    runId?: string;
  }): Promise<EpisodeWrite> {
    return inUserTransaction(this.pool, input.userId, (c) => replaceIn(c, input));
  }

  async get({ userId, ids }: { userId: string; ids: string[] }): Promise<Episode[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<EpisodeRow>(`SELECT ${columns('episodes')} FROM episodes WHERE user_id = $1 AND id = ANY($2::uuid[])`, [userId, ids]);
    return rows.map(toEpisode);
  }

  /**
   * Episodes by the query's words (BM25 over summaries) and by the dates it names (overlap),
   * each list best first, in one round trip.
   */
  async search({
    userId,
    tokens,
    ranges,
    k,
  }: {
    userId: string;
    tokens: string[];
    ranges: readonly { start: Date; end: Date }[];
    k: number;
  }): Promise<{ byWords: Episode[]; byDate: Episode[] }> {
    const terms = [...termFrequencies(tokens).keys()];
    if (terms.length === 0 && ranges.length === 0) return { byWords: [], byDate: [] };
    const { rows } = await this.pool.query<EpisodeRow & { words_score: number | null; date_rank: string | null }>(
      `WITH ${bm25TopCtes({ postings: 'episode_terms', stats: 'episode_index_stats', df: 'episode_term_df' }, '$3')},
            by_words AS (
              SELECT episode_id AS id, score FROM top ORDER BY score DESC, episode_id LIMIT $3),
            by_date AS (
              SELECT e.id, row_number() OVER (ORDER BY e.started_at DESC, e.id) AS rank
                FROM episodes e
               WHERE e.user_id = $1
                 AND EXISTS (SELECT 1 FROM unnest($4::timestamptz[], $5::timestamptz[]) AS r(s, x) WHERE e.started_at < r.x AND e.ended_at >= r.s)
               ORDER BY rank
               LIMIT $3)
       SELECT ${columns('e')}, w.score AS words_score, d.rank AS date_rank
         FROM episodes e
         LEFT JOIN by_words w ON w.id = e.id
         LEFT JOIN by_date d ON d.id = e.id
        WHERE e.user_id = $1 AND (w.id IS NOT NULL OR d.id IS NOT NULL)`,
      [userId, terms, k, ranges.map((r) => r.start), ranges.map((r) => r.end)],
    );
    const byWords = rows.filter((r) => r.words_score !== null).sort((a, b) => b.words_score! - a.words_score! || (a.id < b.id ? -1 : 1));
    const byDate = rows.filter((r) => r.date_rank !== null).sort((a, b) => Number(a.date_rank) - Number(b.date_rank));
    return { byWords: byWords.map(toEpisode), byDate: byDate.map(toEpisode) };
  }

  /** Episodes of the user whose summary was built from any of these messages (to rebuild after a forget). */
  async summarisingAny({ userId, messageIds }: { userId: string; messageIds: string[] }): Promise<{ id: string; conversationId: string }[]> {
    if (messageIds.length === 0) return [];
    const { rows } = await this.pool.query<{ id: string; conversation_id: string }>(
      'SELECT id, conversation_id FROM episodes WHERE user_id = $1 AND summary_message_ids && $2::text[]',
      [userId, messageIds],
    );
    return rows.map((r) => ({ id: r.id, conversationId: r.conversation_id }));
  }

  /** Episodes whose vector in Chroma is missing or stale. */
  async vectorsOwed({ userId, limit = 200 }: { userId: string; limit?: number }): Promise<EpisodeVectorOwed[]> {
    const { rows } = await this.pool.query<{ id: string; conversation_id: string; day: string; summary: string; content_hash: string }>(
      `SELECT id, conversation_id, to_char(day, 'YYYY-MM-DD') AS day, summary, content_hash FROM episodes
        WHERE user_id = $1 AND vector_hash IS DISTINCT FROM content_hash
        ORDER BY started_at LIMIT $2`,
      [userId, limit],
    );
    return rows.map((r) => ({ id: r.id, conversationId: r.conversation_id, day: r.day, summary: r.summary, contentHash: r.content_hash }));
  }

  async markVectorWritten({ userId, id, contentHash }: { userId: string; id: string; contentHash: string }): Promise<void> {
    await this.pool.query('UPDATE episodes SET vector_hash = $3 WHERE user_id = $1 AND id = $2', [userId, id, contentHash]);
  }
}

/** Upserts by deterministic id, re-indexes only what changed, removes episodes no longer produced. */
async function replaceIn(
  c: pg.PoolClient,
  input: { userId: string; conversationId: string; timeZone: string; drafts: EpisodeDraft[]; workflowId?: string; runId?: string },
): Promise<EpisodeWrite> {
  const result: EpisodeWrite = { written: [], unchanged: [], removed: [] };
  const existing = await c.query<{ id: string; content_hash: string; doc_length: number }>(
    'SELECT id, content_hash, doc_length FROM episodes WHERE user_id = $1 AND conversation_id = $2 FOR UPDATE',
    [input.userId, input.conversationId],
  );
  const before = new Map(existing.rows.map((r) => [r.id, r]));
  const keep = new Set<string>();
  for (const d of input.drafts) {
    const id = episodeId(input.userId, input.conversationId, d.day);
    keep.add(id);
    const hash = shortHash(JSON.stringify([d.summary, d.messageIds, d.summaryMessageIds, d.startedAt.toISOString(), d.endedAt.toISOString()]));
    const old = before.get(id);
    if (old?.content_hash === hash) {
      result.unchanged.push(id);
      continue;
    }
    const tokens = tokenizeForIndex(d.summary);
    await c.query(
      `INSERT INTO episodes (id, user_id, conversation_id, day, time_zone, started_at, ended_at, summary, message_ids,
         summary_message_ids, doc_length, content_hash, workflow_id, run_id)
       VALUES ($1,$2,$3,$4::date,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)
       ON CONFLICT (id) DO UPDATE SET time_zone = EXCLUDED.time_zone, started_at = EXCLUDED.started_at,
         ended_at = EXCLUDED.ended_at, summary = EXCLUDED.summary, message_ids = EXCLUDED.message_ids,
         summary_message_ids = EXCLUDED.summary_message_ids, doc_length = EXCLUDED.doc_length,
         content_hash = EXCLUDED.content_hash, workflow_id = EXCLUDED.workflow_id, run_id = EXCLUDED.run_id,
         updated_at = now()`,
      [
        id, input.userId, input.conversationId, d.day, input.timeZone, d.startedAt, d.endedAt, d.summary, d.messageIds,
        d.summaryMessageIds, tokens.length, hash, input.workflowId ?? null, input.runId ?? null,
      ],
    );
    // By the episode's id alone, scoped through its row: as for a memory's postings
    // (DELETE_MEMORY_POSTINGS), the user named on the postings lets the planner walk the user's range.
    await c.query('DELETE FROM episode_terms t USING episodes e WHERE e.user_id = $1 AND e.id = $2 AND t.episode_id = e.id', [input.userId, id]);
    const tf = termFrequencies(tokens);
    if (tf.size > 0) {
      await c.query(
        `INSERT INTO episode_terms (user_id, term, episode_id, tf, doc_length) SELECT $1, t, $2, f, $5 FROM unnest($3::text[], $4::int[]) AS x(t, f)`,
        [input.userId, id, [...tf.keys()], [...tf.values()], tokens.length],
      );
    }
    await adjustStats(c, input.userId, old ? 0 : 1, tokens.length - (old?.doc_length ?? 0));
    result.written.push(id);
  }
  for (const old of existing.rows) {
    if (keep.has(old.id)) continue;
    await c.query('DELETE FROM episodes WHERE user_id = $1 AND id = $2', [input.userId, old.id]);
    await adjustStats(c, input.userId, -1, -old.doc_length);
    result.removed.push(old.id);
  }
  return result;
}

async function adjustStats(c: pg.PoolClient, userId: string, docs: number, length: number): Promise<void> {
  await c.query(
    `INSERT INTO episode_index_stats (user_id, doc_count, total_length) VALUES ($1, GREATEST($2::int, 0), GREATEST($3::bigint, 0))
     ON CONFLICT (user_id) DO UPDATE SET doc_count = GREATEST(episode_index_stats.doc_count + $2::int, 0),
                                         total_length = GREATEST(episode_index_stats.total_length + $3::bigint, 0)`,
    [userId, docs, length],
  );
}
