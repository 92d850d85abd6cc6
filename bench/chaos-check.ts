import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { ChromaNotFoundError } from 'chromadb';
import { chromaClient, userCollectionName } from '../src/adapters/chroma/user-collections';
import { stateQuery } from '../workflows';

/**
 * After a run has settled: what the chaos run's users ended up with, next to the fault-free run's.
 * Every finding is one line in `lost`, `duplicated` or `diverged`, so the report says exactly what
 * went wrong and for whom.
 */

export interface Findings {
  lost: string[];
  duplicated: string[];
  diverged: string[];
}

export interface RunUser {
  /** The script's user name (u0, u1…), shared by both runs. */
  name: string;
  userKey: string;
  /** Reminders the client saw fire and answered: `dismissedAt` (epoch ms) when the dismiss got a 2xx/409. */
  reminders: { id: string; fired: boolean; dismissedAt?: number }[];
}

const normalise = (text: string) => text.normalize('NFKC').trim().toLowerCase().replace(/[\s。.!！]+$/u, '');

/** (type, status, text) → how many memories, of every memory the user has (any status). */
async function memorySet(pool: pg.Pool, userKey: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ type: string; text: string; status: string }>('SELECT type, text, status FROM memories WHERE user_id = $1', [userKey]);
  const out = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.type}|${r.status}|${normalise(r.text)}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/**
 * (action, type, text) → how many keyed decisions were applied: one per statement extracted (or
 * stored through POST /memories). A statement applied twice under two keys is one decision too
 * many (a second "reinforce"); one never applied is one too few. Recall's own reinforcement is not
 * a decision (it depends on what each recall happened to find), so it is left out.
 */
async function decisionSet(pool: pg.Pool, userKey: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ action: string; type: string | null; text: string | null }>(
    `SELECT e.action, m.type, m.text FROM memory_events e LEFT JOIN memories m ON m.id = e.memory_id
      WHERE e.user_id = $1 AND e.idempotency_key IS NOT NULL AND e.actor <> 'recall'`,
    [userKey],
  );
  const out = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.action}|${r.type ?? '-'}|${normalise(r.text ?? '')}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

function compareCounts(findings: Findings, user: string, what: string, mine: Map<string, number>, theirs: Map<string, number>): void {
  for (const [key, want] of theirs) {
    const got = mine.get(key) ?? 0;
    if (got < want) findings.lost.push(`${user}: ${got} ${what} ${key} (reference ${want})`);
    if (got > want) findings.duplicated.push(`${user}: ${got} ${what} ${key} (reference ${want})`);
  }
  for (const [key, got] of mine) if (!theirs.has(key)) findings.diverged.push(`${user}: ${got} ${what} ${key}, none in the reference run`);
}

/** Unextracted messages: those after their conversation's watermark. */
async function behindWatermark(pool: pg.Pool, userKey: string): Promise<{ conversation: string; behind: number }[]> {
  const { rows } = await pool.query<{ conversation_id: string; behind: string }>(
    `SELECT c.conversation_id, count(m.*) AS behind FROM conversations c JOIN messages m USING (user_id, conversation_id)
      WHERE c.user_id = $1 AND m.seq > c.extracted_seq GROUP BY 1`,
    [userKey],
  );
  return rows.map((r) => ({ conversation: r.conversation_id, behind: Number(r.behind) }));
}

/** Is everything the users started done: watermarks at the newest message, outbox empty, reminders settled? */
export async function settled(pool: pg.Pool, userKeys: string[]): Promise<{ done: boolean; why: string }> {
  const { rows } = await pool.query<{ behind: string; outbox: string; reminders: string }>(
    `SELECT (SELECT count(*) FROM conversations WHERE user_id = ANY($1::text[]) AND last_seq > extracted_seq) AS behind,
            (SELECT count(*) FROM vector_outbox WHERE user_id = ANY($1::text[]) AND dead_lettered_at IS NULL) AS outbox,
            (SELECT count(*) FROM reminders WHERE user_id = ANY($1::text[]) AND status NOT IN ('dismissed', 'cancelled')) AS reminders`,
    [userKeys],
  );
  const r = rows[0]!;
  const why = `conversations behind ${r.behind}, outbox ${r.outbox}, open reminders ${r.reminders}`;
  return { done: Number(r.behind) === 0 && Number(r.outbox) === 0 && Number(r.reminders) === 0, why };
}

/** The chaos run's users against the reference run's, user by user. */
export async function compareRuns(deps: { pool: pg.Pool; temporal: Client; chromaUrl: string; collectionPrefix: string }, reference: RunUser[], chaos: RunUser[]): Promise<Findings> {
  const findings: Findings = { lost: [], duplicated: [], diverged: [] };
  const refByName = new Map(reference.map((u) => [u.name, u]));
  const chroma = chromaClient(deps.chromaUrl);
  for (const user of chaos) {
    const ref = refByName.get(user.name);
    if (!ref) {
      findings.diverged.push(`${user.name}: no reference user`);
      continue;
    }
    // 1. Every message stored (the client had a 2xx for each), and extracted: nothing left after a watermark.
    const count = async (key: string) => Number((await deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE user_id = $1', [key])).rows[0]!.n);
    const [stored, refStored] = await Promise.all([count(user.userKey), count(ref.userKey)]);
    if (stored < refStored) findings.lost.push(`${user.name}: ${refStored - stored} message(s) not stored`);
    if (stored > refStored) findings.duplicated.push(`${user.name}: ${stored - refStored} message(s) stored twice`);
    for (const b of await behindWatermark(deps.pool, user.userKey)) findings.lost.push(`${user.name}/${b.conversation}: ${b.behind} message(s) never extracted`);

    // 2. The same memories, each once; the same decisions, each applied once.
    const [mine, theirs, myDecisions, theirDecisions] = await Promise.all([
      memorySet(deps.pool, user.userKey),
      memorySet(deps.pool, ref.userKey),
      decisionSet(deps.pool, user.userKey),
      decisionSet(deps.pool, ref.userKey),
    ]);
    compareCounts(findings, user.name, 'memories', mine, theirs);
    compareCounts(findings, user.name, 'decisions', myDecisions, theirDecisions);

    // 3. Reminders: each due one fired once; the list shows what the workflow holds.
    const { rows: reminders } = await deps.pool.query<{ id: string; status: string; fire_count: number; snooze_count: number; version: number; due_at: Date; snoozed_until: Date | null; dismissed_at: Date | null; workflow_id: string }>(
      'SELECT id, status, fire_count, snooze_count, version, due_at, snoozed_until, dismissed_at, workflow_id FROM reminders WHERE user_id = $1',
      [user.userKey],
    );
    const { rows: notified } = await deps.pool.query<{ reminder_id: string; n: string }>(`SELECT reminder_id, count(*) AS n FROM notifications WHERE user_id = $1 AND kind = 'reminder' GROUP BY 1`, [user.userKey]);
    const notifications = new Map(notified.map((n) => [n.reminder_id, Number(n.n)]));
    if (reminders.length !== ref.reminders.length) findings.diverged.push(`${user.name}: ${reminders.length} reminders (reference ${ref.reminders.length})`);
    for (const row of reminders) {
      // Dismissed before its snooze ran out: it fired exactly once.
      const once = row.dismissed_at && (!row.snoozed_until || row.dismissed_at < row.snoozed_until);
      if (row.fire_count === 0) findings.lost.push(`${user.name}: reminder ${row.id} never fired`);
      else if (once && row.fire_count > 1) findings.duplicated.push(`${user.name}: reminder ${row.id} fired ${row.fire_count}×`);
      const n = notifications.get(row.id) ?? 0;
      if (n < row.fire_count) findings.lost.push(`${user.name}: reminder ${row.id} fired ${row.fire_count}× but notified ${n}×`);
      if (n > row.fire_count) findings.duplicated.push(`${user.name}: reminder ${row.id} notified ${n}× for ${row.fire_count} firing(s)`);
      if (row.status !== 'dismissed') findings.diverged.push(`${user.name}: reminder ${row.id} is ${row.status}, the user dismissed it`);
      try {
        const state = await deps.temporal.workflow.getHandle(row.workflow_id).query(stateQuery);
        const same =
          state.status === row.status && state.fireCount === row.fire_count && state.snoozeCount === row.snooze_count && state.version === row.version && Date.parse(state.dueAt) === row.due_at.getTime();
        if (!same)
          findings.diverged.push(
            `${user.name}: reminder ${row.id} row {${row.status}, fired ${row.fire_count}, snoozed ${row.snooze_count}, v${row.version}} ≠ workflow {${state.status}, fired ${state.fireCount}, snoozed ${state.snoozeCount}, v${state.version}}`,
          );
      } catch (err) {
        findings.diverged.push(`${user.name}: reminder ${row.id} workflow not queryable: ${err instanceof Error ? err.message : String(err)}`);
      }
    }

    // 4. PostgreSQL = Chroma: every active memory has its vector, no vector without one.
    const { rows: active } = await deps.pool.query<{ id: string }>(`SELECT id FROM memories WHERE user_id = $1 AND status = 'active'`, [user.userKey]);
    let vectorIds: string[] = [];
    try {
      const collection = await chroma.getCollection({ name: userCollectionName(deps.collectionPrefix, user.userKey), embeddingFunction: null as never });
      vectorIds = (await collection.get({ include: [] })).ids;
    } catch (err) {
      if (!(err instanceof ChromaNotFoundError)) throw err;
    }
    const activeIds = new Set(active.map((a) => a.id));
    const vectors = new Set(vectorIds);
    for (const id of activeIds) if (!vectors.has(id)) findings.diverged.push(`${user.name}: active memory ${id} has no vector in Chroma`);
    for (const id of vectors) if (!activeIds.has(id)) findings.diverged.push(`${user.name}: vector ${id} in Chroma has no active memory`);
  }
  const { rows: dead } = await deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM vector_outbox WHERE user_id = ANY($1::text[]) AND dead_lettered_at IS NOT NULL', [chaos.map((u) => u.userKey)]);
  if (Number(dead[0]!.n) > 0) findings.diverged.push(`${dead[0]!.n} vector outbox entries dead-lettered`);
  return findings;
}
