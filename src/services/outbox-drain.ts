import type { Embedder, VectorIndex } from '../core/ports';
import type { MemoryType } from '../core/types';

/** A vector write that is due: PostgreSQL committed it, Chroma has not confirmed it. */
export interface DueOutboxEntry {
  memoryId: string;
  userId: string;
  op: 'upsert' | 'delete';
  enqueuedAt: Date;
  attempts: number;
  /** The memory as it is now; undefined when the row is gone (an erased memory's delete). */
  memory?: { text: string; type: string; createdAt: Date };
}

/** How failed entries are retried: base·2^attempts (capped at max), dead-lettered at maxAttempts. */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface OutboxHealth {
  /** Entries waiting for Chroma (due now or backing off), dead letters excluded. */
  pending: number;
  deadLetters: number;
  /** Age of the oldest pending entry; null when nothing is pending. */
  oldestPendingSeconds: number | null;
}

/** The outbox operations the drain needs (PostgreSQL: src/adapters/postgres/outbox-retry-repository.ts). */
export interface OutboxRetryStore {
  due(input: { limit: number; userId?: string }): Promise<DueOutboxEntry[]>;
  done(entry: DueOutboxEntry): Promise<void>;
  failed(input: { entries: DueOutboxEntry[]; error: string; policy: RetryPolicy }): Promise<{ deadLettered: number }>;
  health(): Promise<OutboxHealth>;
}

export interface DrainDeps {
  outbox: OutboxRetryStore;
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
    const embeddings = await deps.embedder.embedDocuments({ texts: upserts.map((e) => e.memory.text) });
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
