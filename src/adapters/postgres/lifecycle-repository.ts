import { ARCHIVE_THRESHOLD } from '../../core/lifecycle/decay';
import { AUTO_REINFORCE_LEVELS, DECAY_SCORE_TOLERANCE, decayConstantsForSql, type LifecycleTransition } from '../../core/lifecycle/sweep';
import type { DecayPageResult, LifecycleAudit, LifecycleRepository, ReinforcementRow, ReinforcementUpdate, VectorDeletion } from '../../core/ports/lifecycle';
import type { Queryable } from './pool';

/**
 * Set-based SQL for the lifecycle jobs: one statement per page moves any number of memories out
 * of `active` and keeps everything that `PostgresMemoryRepository.setStatus` keeps in step for a single change
 * — BM25 postings, per-user index statistics, the vector outbox — plus one audit event per
 * memory. At a million memories a per-row loop is two orders of magnitude slower.
 *
 * Concurrency: the jobs lock with `FOR UPDATE SKIP LOCKED` (memory rows and the users' index
 * statistics rows). They therefore never wait for the chat write path — a row a writer holds is
 * simply left for the next run — and cannot deadlock with it. Writers may wait for one page.
 */

/** The lowest uuid: the cursor of a sweep that has not started. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/**
 * CTEs that retire the rows of a CTE named `moved` (id, user_id, doc_length, action, reason,
 * before, after) from the active set: postings, statistics, vector outbox, audit. `$now`, `$wf`,
 * `$run`, `$actor` are the placeholders of the statement they are spliced into.
 */
function retireMovedCtes(p: { now: string; wf: string; run: string; actor: string }): string {
  return `
  -- By the memory's id alone: a moved row is a memory, and its postings carry its user. With the
  -- user named too, the planner probed the primary key and walked each user's whole range of
  -- postings (664,112 pages for a page of 500 memories of a 10k-memory user, never analysed).
  unposted AS (
    DELETE FROM memory_terms t USING moved WHERE t.memory_id = moved.id RETURNING 1
  ),
  restat AS (
    UPDATE user_index_stats s
       SET doc_count = GREATEST(s.doc_count - a.n, 0), total_length = GREATEST(s.total_length - a.len, 0)
      FROM (SELECT user_id, count(*)::int AS n, COALESCE(sum(doc_length), 0)::bigint AS len FROM moved GROUP BY user_id) a
     WHERE s.user_id = a.user_id
    RETURNING 1
  ),
  outboxed AS (
    INSERT INTO vector_outbox (memory_id, user_id, op, enqueued_at)
    SELECT id, user_id, 'delete', clock_timestamp() FROM moved
    ON CONFLICT (memory_id) DO UPDATE SET op = 'delete', enqueued_at = EXCLUDED.enqueued_at, attempts = 0, last_error = NULL
    RETURNING 1
  ),
  audited AS (
    INSERT INTO memory_events (user_id, memory_id, action, reason, before, after, workflow_id, run_id, actor, created_at)
    SELECT user_id, id, action, reason, before, after, ${p.wf}, ${p.run}, ${p.actor}, ${p.now} FROM moved
    RETURNING 1
  )`;
}

const MOVED_JSON = `COALESCE((SELECT json_agg(json_build_object('memoryId', id, 'userId', user_id, 'action', action, 'reason', reason) ORDER BY id) FROM moved), '[]'::json)`;

export class PostgresLifecycleRepository implements LifecycleRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * One page of the daily decay pass, across all users, in id order after `afterId`: refreshes
   * `decay_score = exp(−idle days / τ(level))`, expires memories whose `expires_at` has passed
   * and archives those whose decay fell below the threshold (never standing instructions) — the
   * rule of `sweepDecision`. τ comes from the same constants as
   * `computeDecay`. Re-running a page at the same `now` writes nothing.
   */
  async sweepDecayPage(input: { now: Date; afterId: string | null; limit: number; audit: LifecycleAudit; decayTolerance?: number }): Promise<DecayPageResult> {
    const { levels, tauDays } = decayConstantsForSql();
    // On tables never analysed PostgreSQL guesses a few dozen active rows after the cursor, so it
    // fetches all of them through a bitmap and sorts them to keep the first page: every page
    // reads every active row after it. The ordered walk of the partial index stops at the page's
    // last row whatever the estimate. Local to the transaction, and put back after the statement
    // (a failed statement aborts the transaction, which drops the setting with it).
    await this.db.query('SET LOCAL enable_bitmapscan = off');
    const { rows } = await this.db.query<{ scanned: number; last_id: string | null; updated: number; moved: LifecycleTransition[] }>(
      `WITH candidates AS MATERIALIZED (
         SELECT id, user_id, type, importance_level, last_accessed_at, expires_at, doc_length, decay_score,
                GREATEST(0, extract(epoch FROM ($3::timestamptz - last_accessed_at))::float8 / 86400) AS idle_days
           FROM memories WHERE status = 'active' AND id > $1::uuid ORDER BY id LIMIT $2
       ),
       decided AS MATERIALIZED (
         SELECT c.*, exp(-c.idle_days / t.tau) AS decay,
                CASE WHEN c.expires_at IS NOT NULL AND c.expires_at <= $3::timestamptz THEN 'expire'
                     WHEN exp(-c.idle_days / t.tau) < $6::float8 AND c.type <> 'instruction' THEN 'archive' END AS action
           FROM candidates c JOIN unnest($4::text[], $5::float8[]) AS t(level, tau) ON t.level = c.importance_level
       ),
       todo AS MATERIALIZED (
         SELECT * FROM decided WHERE action IS NOT NULL OR abs(decay_score - decay::real) > $10::float8
       ),
       locked_users AS MATERIALIZED (
         SELECT user_id FROM user_index_stats WHERE user_id IN (SELECT user_id FROM todo WHERE action IS NOT NULL)
          ORDER BY user_id FOR UPDATE SKIP LOCKED
       ),
       -- Lock only what will be written, skipping rows a writer holds. The re-checked columns make
       -- a row that changed since this statement's snapshot (reinforced, re-dated) drop out: its
       -- decision was computed from the old values. It carries the decision with it so the UPDATE
       -- joins memories to one CTE by primary key: joined to two, a planner that trusts an
       -- estimate of a few rows (tables never analysed) rescans one per row of the other,
       -- 5,000 × 5,000 comparisons a page.
       locked AS MATERIALIZED (
         SELECT d.* FROM memories m JOIN todo d ON d.id = m.id
          WHERE m.status = 'active' AND m.last_accessed_at = d.last_accessed_at AND m.importance_level = d.importance_level
            AND m.expires_at IS NOT DISTINCT FROM d.expires_at AND m.type = d.type
            AND (d.action IS NULL OR m.user_id IN (SELECT user_id FROM locked_users)
                 OR NOT EXISTS (SELECT 1 FROM user_index_stats s WHERE s.user_id = m.user_id))
            FOR UPDATE OF m SKIP LOCKED
       ),
       changed AS (
         UPDATE memories m
            SET decay_score = d.decay,
                status = CASE d.action WHEN 'expire' THEN 'expired' WHEN 'archive' THEN 'archived' ELSE m.status END,
                archived_at = CASE d.action WHEN 'archive' THEN $3::timestamptz WHEN 'expire' THEN NULL ELSE m.archived_at END,
                updated_at = CASE WHEN d.action IS NULL THEN m.updated_at ELSE GREATEST(m.updated_at, $3::timestamptz) END
           FROM locked d
          WHERE m.id = d.id
         RETURNING m.id, m.user_id, d.doc_length, d.action,
                   CASE d.action
                     WHEN 'expire' THEN 'lifetime ended at ' || to_char(d.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                     ELSE format('decay %s < %s (%s importance, %s days since last access)',
                                 round(d.decay::numeric, 4), $6::float8, d.importance_level, round(d.idle_days::numeric, 1))
                   END AS reason,
                   jsonb_build_object('status', 'active', 'decayScore', d.decay_score, 'importanceLevel', d.importance_level,
                                      'lastAccessedAt', d.last_accessed_at, 'expiresAt', d.expires_at) AS before,
                   jsonb_build_object('status', CASE d.action WHEN 'expire' THEN 'expired' ELSE 'archived' END,
                                      'decayScore', d.decay::real) AS after
       ),
       moved AS (SELECT * FROM changed WHERE action IS NOT NULL),
       ${retireMovedCtes({ now: '$3::timestamptz', wf: '$7::text', run: '$8::text', actor: '$9::text' })}
       SELECT (SELECT count(*) FROM candidates)::int AS scanned,
              (SELECT id::text FROM candidates ORDER BY id DESC LIMIT 1) AS last_id,
              (SELECT count(*) FROM changed)::int AS updated,
              ${MOVED_JSON} AS moved`,
      [input.afterId ?? FIRST_ID, input.limit, input.now, levels, tauDays, ARCHIVE_THRESHOLD, input.audit.workflowId ?? null, input.audit.runId ?? null, input.audit.actor, input.decayTolerance ?? DECAY_SCORE_TOLERANCE],
    );
    await this.db.query('SET LOCAL enable_bitmapscan = on');
    const r = rows[0]!;
    return { scanned: r.scanned, lastId: r.last_id, updated: r.updated, transitions: r.moved };
  }

  /**
   * Expires up to `limit` archived memories whose lifetime has ended, so an archived event cannot
   * be restored after its date. Archived memories have no postings or vectors: only the row and
   * the audit change. Returns what it expired; fewer than `limit` means none are left.
   */
  async expireArchivedPage(input: { now: Date; limit: number; audit: LifecycleAudit }): Promise<LifecycleTransition[]> {
    const { rows } = await this.db.query<{ moved: LifecycleTransition[] }>(
      `WITH due AS MATERIALIZED (
         SELECT id FROM memories WHERE status = 'archived' AND expires_at <= $1::timestamptz
          ORDER BY expires_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
       ),
       moved AS (
         UPDATE memories m SET status = 'expired', archived_at = NULL, updated_at = GREATEST(m.updated_at, $1::timestamptz)
           FROM due WHERE m.id = due.id
         RETURNING m.id, m.user_id, 'expire'::text AS action,
                   'lifetime ended at ' || to_char(m.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' while archived' AS reason
       ),
       audited AS (
         INSERT INTO memory_events (user_id, memory_id, action, reason, before, after, workflow_id, run_id, actor, created_at)
         SELECT user_id, id, action, reason, '{"status":"archived"}'::jsonb, '{"status":"expired"}'::jsonb, $3::text, $4::text, $5::text, $1::timestamptz
           FROM moved
         RETURNING 1
       )
       SELECT ${MOVED_JSON} AS moved`,
      [input.now, input.limit, input.audit.workflowId ?? null, input.audit.runId ?? null, input.audit.actor],
    );
    return rows[0]!.moved;
  }

  /** Users after `afterUserId` holding more than `cap` active memories, in user id order. */
  async usersOverCapacity(input: { cap: number; afterUserId: string | null; limit: number }): Promise<string[]> {
    const { rows } = await this.db.query<{ user_id: string }>(
      `SELECT user_id FROM memories WHERE status = 'active' AND user_id > $1
        GROUP BY user_id HAVING count(*) > $2 ORDER BY user_id LIMIT $3`,
      [input.afterUserId ?? '', input.cap, input.limit],
    );
    return rows.map((r) => r.user_id);
  }

  /**
   * Archives, for each given user, the active memories beyond the top `cap` by importance (ties:
   * more recently accessed, then id) — the rule of `capacityOverflow`. Instructions are never
   * archived but count towards the cap. A user whose index statistics row is locked by a writer
   * is skipped until the next sweep.
   */
  async archiveOverCapacity(input: { userIds: string[]; cap: number; now: Date; audit: LifecycleAudit }): Promise<LifecycleTransition[]> {
    if (input.userIds.length === 0) return [];
    const { rows } = await this.db.query<{ moved: LifecycleTransition[] }>(
      `WITH locked_users AS MATERIALIZED (
         SELECT user_id FROM user_index_stats WHERE user_id = ANY($1::text[]) ORDER BY user_id FOR UPDATE SKIP LOCKED
       ),
       instructions AS (
         SELECT user_id, count(*)::int AS n FROM memories
          WHERE user_id IN (SELECT user_id FROM locked_users) AND status = 'active' AND type = 'instruction'
          GROUP BY user_id
       ),
       ranked AS MATERIALIZED (
         SELECT m.id, m.user_id, m.doc_length, m.importance, m.decay_score, COALESCE(i.n, 0) AS instructions,
                row_number() OVER (PARTITION BY m.user_id ORDER BY m.importance DESC, m.last_accessed_at DESC, m.id) AS rank
           FROM memories m LEFT JOIN instructions i USING (user_id)
          WHERE m.user_id IN (SELECT user_id FROM locked_users) AND m.status = 'active' AND m.type <> 'instruction'
       ),
       -- Carries its ranking so the UPDATE joins memories to one CTE by primary key, as the decay
       -- page's does: joined to both, the planner rescanned one per row of the other on tables never
       -- analysed (37 million comparisons, 9 s, for a user of 10,000 over a cap of 5,000).
       victims AS MATERIALIZED (
         SELECT r.* FROM memories m JOIN ranked r USING (id)
          WHERE r.rank > GREATEST($2::int - r.instructions, 0) AND m.status = 'active'
            FOR UPDATE OF m SKIP LOCKED
       ),
       moved AS (
         UPDATE memories m SET status = 'archived', archived_at = $3::timestamptz, updated_at = GREATEST(m.updated_at, $3::timestamptz)
           FROM victims r
          WHERE m.id = r.id
         RETURNING m.id, m.user_id, r.doc_length, 'archive'::text AS action,
                   format('over capacity: rank %s by importance among non-instruction memories, cap %s', r.rank, $2::int) AS reason,
                   jsonb_build_object('status', 'active', 'importance', r.importance, 'decayScore', r.decay_score) AS before,
                   jsonb_build_object('status', 'archived') AS after
       ),
       ${retireMovedCtes({ now: '$3::timestamptz', wf: '$4::text', run: '$5::text', actor: '$6::text' })}
       SELECT ${MOVED_JSON} AS moved`,
      [input.userIds, input.cap, input.now, input.audit.workflowId ?? null, input.audit.runId ?? null, input.audit.actor],
    );
    return rows[0]!.moved;
  }

  /**
   * High/critical active memories after `afterId` not accessed since `now`, locked for the
   * weekly reinforcement (rows a writer holds are skipped).
   */
  async lockReinforcementPage(input: { now: Date; afterId: string | null; limit: number }): Promise<ReinforcementRow[]> {
    const { rows } = await this.db.query(
      `SELECT id, user_id, text, frequency_count, associated_topics, importance, importance_level, last_accessed_at, decay_score
         FROM memories
        WHERE status = 'active' AND importance_level = ANY($4::text[]) AND id > $1::uuid AND last_accessed_at < $3::timestamptz
        ORDER BY id LIMIT $2
          FOR UPDATE SKIP LOCKED`,
      [input.afterId ?? FIRST_ID, input.limit, input.now, AUTO_REINFORCE_LEVELS],
    );
    return rows.map((r) => ({
      id: r.id,
      userId: r.user_id,
      text: r.text,
      frequencyCount: r.frequency_count,
      associatedTopics: r.associated_topics,
      importance: r.importance,
      importanceLevel: r.importance_level,
      lastAccessedAt: r.last_accessed_at,
      decayScore: r.decay_score,
    }));
  }

  /**
   * Resets decay (last access = `now`, decay 1) and stores the recomputed importance of the given
   * memories, one audit event each. `updated_at` is left alone: a scheduled refresh is not
   * something the user did, and the "recent" recall route orders by it.
   */
  async applyReinforcement(input: { now: Date; updates: ReinforcementUpdate[]; audit: LifecycleAudit; reason: string }): Promise<LifecycleTransition[]> {
    if (input.updates.length === 0) return [];
    const { rows } = await this.db.query<{ moved: LifecycleTransition[] }>(
      `WITH x AS MATERIALIZED (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, importance real, "importanceLevel" text, components jsonb)
       ),
       -- The rows before the update, read through the primary key by the list of ids, and carrying
       -- the new values: the UPDATE then joins memories to this one set by key. Joined to the list
       -- and to a subquery of memories, the planner, estimating neither on tables never analysed,
       -- scanned the whole table for a page of 500.
       old AS MATERIALIZED (
         SELECT m.id, m.last_accessed_at, m.importance, m.importance_level, m.decay_score,
                x.importance AS new_importance, x."importanceLevel" AS new_importance_level, x.components AS new_components
           FROM memories m JOIN x ON x.id = m.id
          WHERE m.id = ANY (ARRAY(SELECT id FROM x))
       ),
       moved AS (
         UPDATE memories m
            SET last_accessed_at = GREATEST(m.last_accessed_at, $2::timestamptz), decay_score = 1,
                importance = old.new_importance, importance_level = old.new_importance_level, importance_components = old.new_components
           FROM old
          WHERE m.id = old.id AND m.status = 'active'
         RETURNING m.id, m.user_id, 'reinforce'::text AS action, $3::text AS reason,
                   jsonb_build_object('lastAccessedAt', old.last_accessed_at, 'decayScore', old.decay_score,
                                      'importance', old.importance, 'importanceLevel', old.importance_level) AS before,
                   jsonb_build_object('lastAccessedAt', m.last_accessed_at, 'decayScore', 1,
                                      'importance', m.importance, 'importanceLevel', m.importance_level) AS after
       ),
       audited AS (
         INSERT INTO memory_events (user_id, memory_id, action, reason, before, after, workflow_id, run_id, actor, created_at)
         SELECT user_id, id, 'auto_reinforce', reason, before, after, $4::text, $5::text, $6::text, $2::timestamptz FROM moved
         RETURNING 1
       )
       SELECT ${MOVED_JSON} AS moved`,
      [JSON.stringify(input.updates), input.now, input.reason, input.audit.workflowId ?? null, input.audit.runId ?? null, input.audit.actor],
    );
    return rows[0]!.moved;
  }

  /**
   * Pending vector deletions after `afterId` (memory id order), locked until the caller's
   * transaction ends: while Chroma deletes them, a restore of the same memory waits to re-enqueue
   * its upsert instead of having its fresh vector deleted after the fact. Entries another
   * transaction holds are skipped.
   */
  async lockVectorDeletes(input: { afterId: string | null; limit: number }): Promise<VectorDeletion[]> {
    const { rows } = await this.db.query<{ memory_id: string; user_id: string }>(
      `SELECT memory_id, user_id FROM vector_outbox
        WHERE op = 'delete' AND memory_id > $1::uuid ORDER BY memory_id LIMIT $2
          FOR UPDATE SKIP LOCKED`,
      [input.afterId ?? FIRST_ID, input.limit],
    );
    return rows.map((r) => ({ memoryId: r.memory_id, userId: r.user_id }));
  }

  /** Clears deletions this transaction locked with {@link lockVectorDeletes} once Chroma confirmed them. */
  async clearVectorDeletes({ entries }: { entries: VectorDeletion[] }): Promise<number> {
    if (entries.length === 0) return 0;
    const { rowCount } = await this.db.query(
      `DELETE FROM vector_outbox o USING unnest($1::uuid[], $2::text[]) AS x(memory_id, user_id)
        WHERE o.memory_id = x.memory_id AND o.user_id = x.user_id AND o.op = 'delete'`,
      [entries.map((e) => e.memoryId), entries.map((e) => e.userId)],
    );
    return rowCount ?? 0;
  }

  /** Records a failed deletion attempt on the entries (they stay for the next drain). */
  async failVectorDeletes({ entries, error }: { entries: VectorDeletion[]; error: string }): Promise<void> {
    await this.db.query(
      `UPDATE vector_outbox o SET attempts = o.attempts + 1, last_error = $3
         FROM unnest($1::uuid[], $2::text[]) AS x(memory_id, user_id)
        WHERE o.memory_id = x.memory_id AND o.user_id = x.user_id`,
      [entries.map((e) => e.memoryId), entries.map((e) => e.userId), error.slice(0, 500)],
    );
  }
}
