import type { DueOutboxEntry, Embedder, OutboxHealth, OutboxRetryRepository, RetryPolicy, VectorIndex } from '../core/ports/memory';
import type { ServiceDeps } from '../shared/deps';

export type { DueOutboxEntry, OutboxHealth, RetryPolicy };
import type { MemoryType } from '../core/types';

export interface DrainDeps {
  outbox: OutboxRetryRepository;
  vectors: Pick<VectorIndex, 'upsert' | 'remove'>;
  embedder: Pick<Embedder, 'embedDocuments'>;
}

export interface DrainResult {
  upserted: number;
  removed: number;
  /** Entries that failed this time (they back off, or were dead-lettered). */
  failed: number;
  deadLettered: number;
  /** True when the drain stopped early because every write failed (Chroma or the embedder is down). */
  stoppedEarly: boolean;
}

/** Users in a row whose writes all failed before the drain concludes the dependency is down. */
const DOWN_AFTER_USERS = 3;

/**
 * One pass over the due entries of the vector outbox (all users, or one). Each user's entries go
 * to Chroma in one batch; when a batch fails, its entries are tried one by one so a poisoned entry
 * fails alone and the others still get through. A failed entry backs off and, after
 * `policy.maxAttempts`, is dead-lettered: it no longer sits at the head of the queue. When the
 * first entry of a user already fails alone, the rest of that user's entries are left untouched
 * for the next pass (the dependency may be down: no point counting failures against them), and
 * after a few such users in a row the pass stops.
 */
export async function drainOutbox(deps: DrainDeps, opts: { policy: RetryPolicy; userId?: string; limit?: number }): Promise<DrainResult> {
  const result: DrainResult = { upserted: 0, removed: 0, failed: 0, deadLettered: 0, stoppedEarly: false };
  const entries = await deps.outbox.due({ limit: opts.limit ?? 500, userId: opts.userId });
  const byUser = new Map<string, DueOutboxEntry[]>();
  for (const e of entries) byUser.set(e.userId, [...(byUser.get(e.userId) ?? []), e]);

  const fail = async (list: DueOutboxEntry[], err: unknown) => {
    const { deadLettered } = await deps.outbox.failed({ entries: list, error: errorChain(err), policy: opts.policy });
    result.failed += list.length;
    result.deadLettered += deadLettered;
  };
  const succeed = async (list: DueOutboxEntry[]) => {
    for (const e of list) await deps.outbox.done(e);
    for (const e of list) {
      if (e.op === 'delete') result.removed++;
      else if (e.memory) result.upserted++;
    }
  };

  let downStreak = 0;
  for (const [userId, list] of byUser) {
    try {
      await write(deps, userId, list);
      await succeed(list);
      downStreak = 0;
      continue;
    } catch (err) {
      if (list.length === 1) {
        await fail(list, err);
        if (++downStreak >= DOWN_AFTER_USERS) return { ...result, stoppedEarly: true };
        continue;
      }
    }
    // The batch failed: isolate the entry (or entries) that made it fail.
    let anyWritten = false;
    for (const entry of list) {
      try {
        await write(deps, userId, [entry]);
        await succeed([entry]);
        anyWritten = true;
      } catch (err) {
        await fail([entry], err);
        if (!anyWritten) break;
      }
    }
    downStreak = anyWritten ? 0 : downStreak + 1;
    if (downStreak >= DOWN_AFTER_USERS) return { ...result, stoppedEarly: true };
  }
  return result;
}

/** Sends one user's entries to the vector index: deletes, then upserts (embedded now). */
async function write(deps: DrainDeps, userId: string, list: DueOutboxEntry[]): Promise<void> {
  const deletes = list.filter((e) => e.op === 'delete');
  // An upsert whose memory row is gone has nothing to write: it just leaves the outbox.
  const upserts = list.filter((e): e is DueOutboxEntry & { memory: NonNullable<DueOutboxEntry['memory']> } => e.op === 'upsert' && e.memory !== undefined);
  if (deletes.length > 0) await deps.vectors.remove({ userId, ids: deletes.map((e) => e.memoryId) });
  if (upserts.length > 0) {
    const embeddings = await deps.embedder.embedDocuments({ texts: upserts.map((e) => e.memory.text), lane: 'background' });
    await deps.vectors.upsert({
      userId,
      items: upserts.map((e, i) => ({ id: e.memoryId, embedding: embeddings[i]!, type: e.memory.type as MemoryType, createdAt: e.memory.createdAt.toISOString() })),
    });
  }
}

/** The error and its causes in one line: "Chroma upsert failed: … dimension …" tells an operator why. */
function errorChain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && parts.length < 4; e = e instanceof Error ? e.cause : undefined) {
    parts.push(e instanceof Error ? e.message : String(e));
  }
  return parts.join(': ');
}

/** Backoff before attempt n+1 after n failed attempts (what the PostgreSQL store computes too). */
export function backoffMs(policy: RetryPolicy, attempts: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempts);
}

export interface DrainSummary extends DrainResult {
  passes: number;
}

/**
 * Drains due vector writes pass after pass (one user's, or everyone's for the schedule) until
 * nothing more goes through, the dependency looks down, or `budgetMs` is spent; `onPass` after
 * each pass (a heartbeat). Never fails for an entry the vector index refuses: the outbox keeps it.
 */
export async function drainVectorOutbox(
  deps: Pick<ServiceDeps, 'outboxRetries' | 'vectors' | 'embedder' | 'config'>,
  input: { userId?: string; budgetMs: number; onPass?: (passes: number) => void },
): Promise<DrainSummary> {
  const deadline = Date.now() + input.budgetMs;
  const summary: DrainSummary = { upserted: 0, removed: 0, failed: 0, deadLettered: 0, stoppedEarly: false, passes: 0 };
  for (;;) {
    const pass = await drainOutbox({ outbox: deps.outboxRetries, vectors: deps.vectors, embedder: deps.embedder }, { policy: deps.config.reliability.outbox, userId: input.userId, limit: 200 });
    summary.passes++;
    summary.upserted += pass.upserted;
    summary.removed += pass.removed;
    summary.failed += pass.failed;
    summary.deadLettered += pass.deadLettered;
    summary.stoppedEarly ||= pass.stoppedEarly;
    input.onPass?.(summary.passes);
    // Stop when nothing more went through (only failures or nothing due) or the budget is spent.
    if (pass.upserted + pass.removed === 0 || pass.stoppedEarly || Date.now() > deadline) return summary;
  }
}

/** The outbox's counts for the operator's health check. */
export async function outboxHealth(deps: Pick<ServiceDeps, 'outboxRetries'>): Promise<OutboxHealth> {
  return deps.outboxRetries.health();
}
