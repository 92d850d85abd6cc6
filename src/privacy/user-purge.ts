/**
 * Purge of one user (right to erasure, DELETE /v1/users/{userId}): the steps the PurgeUser
 * workflow runs as activities. Each step is idempotent — it deletes what is still there and
 * counts it — so a retried or repeated step is harmless, and purging a user who never existed
 * succeeds with zero counts.
 */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ErrorCode, isForeignKeyViolation, MemoryServiceError } from '../core/errors';
import { USER_KEY_PATTERN, type PurgeCounts } from '../core/privacy/purge';
import type { ServiceDeps } from '../shared/deps';
import { digestScheduleId, nudgeScheduleId } from '../proactive/proactive-schedules';

export type PurgeDeps = Pick<ServiceDeps, 'vectors' | 'episodeVectors' | 'exchangeVectors' | 'userKeyDestroyer'>;

/** Starts the audit row of a purge run (idempotent: a retried activity finds it). */
export function beginPurgeAudit(deps: Pick<ServiceDeps, 'purgeAudit'>, input: { tenantId: string; userRef: string; workflowId: string; runId: string; requestedAt: Date }): Promise<void> {
  return deps.purgeAudit.begin(input);
}

/** Completes the audit row of a purge run with its counts (numbers only). */
export function completePurgeAudit(deps: Pick<ServiceDeps, 'purgeAudit'>, input: { runId: string; completedAt: Date; counts: PurgeCounts }): Promise<void> {
  return deps.purgeAudit.complete(input);
}

/** Rows per delete statement (one transaction each) in the first pass. */
export const PURGE_BATCH = 5000;

/** Refuses a key that could break out of a quoted visibility query; such a key is no user key. */
export function assertUserKey(userKey: string): void {
  if (!USER_KEY_PATTERN.test(userKey)) throw new MemoryServiceError(ErrorCode.validationFailed, 'not a user key', { field: 'userKey' });
}

/**
 * Rounds over the tables one attempt makes when writes for the user keep committing between the
 * deletion of their table and of the user; past them the attempt fails as a retryable error, and
 * Temporal tries again after its backoff.
 */
export const PURGE_ROUNDS = 5;

/**
 * A foreign-key error in the purge, which only deletes, children first: a write for the user
 * (a message, a reminder, a memory) committed a row after its table was emptied, and the `users`
 * row it references can no longer go. The pool reports it as the 409 `user_purged` meant for that
 * write; for the purge it means "delete again", never a failure.
 */
const isRacingWrite = isForeignKeyViolation;

/**
 * Deletes the user's rows from every table that holds any (UserRowPurge). First pass (`final:
 * false`): pages of {@link PURGE_BATCH} rows, one short transaction each (a big user does not hold
 * locks for minutes). Final pass: everything left in one transaction under the user's advisory
 * lock — the lock the write path takes — so no extraction decision is half-way through while the
 * last rows go. A row a racing write commits meanwhile makes the pass start over (docs/security.md).
 */
export async function purgeUserRows(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  userKey: string,
  opts: { final: boolean; batch?: number; onProgress?: (counts: Record<string, number>) => void },
): Promise<Record<string, number>> {
  assertUserKey(userKey);
  const counts: Record<string, number> = {};
  for (let round = 1; ; round++) {
    try {
      await (opts.final ? deleteInOneTransaction(deps, userKey, counts) : deleteInPages(deps, userKey, counts, opts.batch ?? PURGE_BATCH, opts.onProgress));
      if (opts.final) opts.onProgress?.(counts);
      return counts;
    } catch (err) {
      if (!isRacingWrite(err)) throw err;
      if (round >= PURGE_ROUNDS) {
        opts.onProgress?.(counts);
        throw new Error(`writes for the user kept committing rows while they were deleted (${PURGE_ROUNDS} rounds): the attempt is retried`, { cause: err });
      }
    }
  }
}

function addCounts(counts: Record<string, number>, step: { table: string; deleted: number }): void {
  counts[step.table] = (counts[step.table] ?? 0) + step.deleted;
}

/** Counted once committed: a transaction a racing write rolled back deleted nothing. */
async function deleteInOneTransaction(deps: Pick<ServiceDeps, 'unitOfWork'>, userKey: string, counts: Record<string, number>): Promise<void> {
  const steps = await deps.unitOfWork.forUser({
    userId: userKey,
    work: async (tx) => {
      const done: { table: string; deleted: number }[] = [];
      let step = await tx.purge.deleteNextRows({ userKey, limit: null });
      while (step) {
        done.push(step);
        step = step.next === null ? undefined : await tx.purge.deleteNextRows({ userKey, from: step.next, limit: null });
      }
      return done;
    },
  });
  for (const step of steps) addCounts(counts, step);
}

async function deleteInPages(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  userKey: string,
  counts: Record<string, number>,
  limit: number,
  onProgress: ((counts: Record<string, number>) => void) | undefined,
): Promise<void> {
  let from: string | undefined;
  for (;;) {
    const step = await deps.unitOfWork.forUser({ userId: userKey, work: (tx) => tx.purge.deleteNextRows({ userKey, from, limit }) });
    if (!step) return;
    addCounts(counts, step);
    onProgress?.(counts);
    if (step.next === null) return;
    from = step.next;
  }
}

/** Drops the user's Chroma collections, one per kind of vector. Returns 1 per collection that existed. */
export async function dropUserVectors(deps: Pick<ServiceDeps, 'vectors' | 'episodeVectors' | 'exchangeVectors'>, userKey: string): Promise<Record<string, number>> {
  assertUserKey(userKey);
  const stores = [
    { kind: 'memories', store: deps.vectors },
    ...(deps.episodeVectors ? [{ kind: 'episodes', store: deps.episodeVectors }] : []),
    ...(deps.exchangeVectors ? [{ kind: 'exchanges', store: deps.exchangeVectors }] : []),
  ];
  const dropped: Record<string, number> = {};
  for (const { kind, store } of stores) dropped[kind] = (await store.dropUser(userKey)) ? 1 : 0;
  return dropped;
}

/** The visibility query that finds every workflow and schedule of a user. */
export function userVisibilityQuery(userKey: string): string {
  assertUserKey(userKey);
  return `MemoryUserId = '${userKey}'`;
}

const RUNNING = proto.temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;

/**
 * Pages of a visibility listing, read raw: the SDK's own listings decode each entry's memo, which
 * is encrypted with the user's data key, and once the purge has destroyed that key a listing of
 * what is left (an execution whose deletion the server has not carried out yet, one started in the
 * race) would fail on every attempt and hold the purge forever.
 */
async function* rawPages<T>(list: (nextPageToken: Uint8Array | undefined) => Promise<{ items: T[]; nextPageToken?: Uint8Array | null }>): AsyncGenerator<T> {
  let token: Uint8Array | undefined;
  do {
    const page = await list(token);
    yield* page.items;
    token = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (token);
}

/**
 * Deletes the user's Temporal Schedules: the known per-user ones (daily digest, nudges) and any
 * other schedule carrying the user's MemoryUserId. Returns how many were deleted.
 */
export async function deleteUserSchedules(temporal: Client, userKey: string): Promise<number> {
  const ids = new Set([digestScheduleId(userKey), nudgeScheduleId(userKey)]);
  const namespace = temporal.options.namespace;
  const query = userVisibilityQuery(userKey);
  const schedules = rawPages((nextPageToken) => temporal.workflowService.listSchedules({ namespace, query, nextPageToken }).then((r) => ({ items: r.schedules ?? [], nextPageToken: r.nextPageToken })));
  for await (const s of schedules) if (s.scheduleId) ids.add(s.scheduleId);
  let deleted = 0;
  for (const id of ids) {
    try {
      await temporal.schedule.getHandle(id).delete();
      deleted++;
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }
  return deleted;
}

const GRPC_NOT_FOUND = 5;
const isGrpcNotFound = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { code?: number }).code === GRPC_NOT_FOUND;

/**
 * Deletes every workflow execution of the user (history and visibility) through
 * WorkflowService.DeleteWorkflowExecution, found by `MemoryUserId = '<userKey>'`; a running one is
 * terminated by the server first, in that order (terminating it ourselves and deleting right after
 * races the server's close and can leave a visibility record behind). `skipWorkflowId` (the purge
 * itself) is left alone. Visibility is eventually consistent: an execution started a moment ago
 * may not be listed yet, which is why the purge runs this twice.
 */
export async function deleteUserWorkflows(
  temporal: Client,
  opts: { namespace: string; userKey: string; skipWorkflowId?: string; onProgress?: (done: { terminated: number; deleted: number }) => void },
): Promise<{ terminated: number; deleted: number }> {
  const done = { terminated: 0, deleted: 0 };
  const { namespace } = opts;
  const query = userVisibilityQuery(opts.userKey);
  const executions = rawPages((nextPageToken) => temporal.workflowService.listWorkflowExecutions({ namespace, query, nextPageToken }).then((r) => ({ items: r.executions ?? [], nextPageToken: r.nextPageToken })));
  for await (const execution of executions) {
    const { workflowId, runId } = execution.execution ?? {};
    if (!workflowId || workflowId === opts.skipWorkflowId) continue;
    try {
      await temporal.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } });
      done.deleted++;
      if (execution.status === RUNNING) done.terminated++;
    } catch (err) {
      // Deleted since it was listed (visibility lags behind): nothing left to do.
      if (!isGrpcNotFound(err)) throw err;
    }
    opts.onProgress?.(done);
  }
  return done;
}

/** Calls the payload codec's key destroyer when one is configured; false without one. */
export async function destroyUserDataKey(deps: Pick<ServiceDeps, 'userKeyDestroyer'>, userKey: string): Promise<boolean> {
  assertUserKey(userKey);
  if (!deps.userKeyDestroyer) return false;
  await deps.userKeyDestroyer.destroyUserKey(userKey);
  return true;
}
