import { log, patched, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { createPrivacyActivities } from '../../activities/privacy/privacy';
import { addPurgeCounts, emptyPurgeCounts, type PurgeCounts } from '../../src/core/privacy/purge';
import type { PurgeUserInput, PurgeUserResult } from '../../src/privacy/contract';

type Activities = ReturnType<typeof createPrivacyActivities>;

// An erasure must finish: every step is idempotent, so it is retried without an attempt limit
// (a store that is down delays the purge, visibly in Temporal UI, instead of failing it).
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' };
const quick: ActivityOptions = { startToCloseTimeout: '1m', retry };
// Deleting a large user's rows or executions takes a while; progress is heartbeated.
const long: ActivityOptions = { startToCloseTimeout: '30m', heartbeatTimeout: '1m', retry };
const acts = proxyActivities<Activities>(quick);

/** Histories recorded before the third pass, run after the user's key is destroyed, replay without it. */
export const PASS_AFTER_KEY_PATCH = 'purge-pass-after-key';

export type { PurgeUserInput, PurgeUserResult };

/** One pass over every store: schedules, workflow executions, PostgreSQL rows, Chroma collections. */
async function purgePass(pass: 1 | 2 | 3, user: { userKey: string }): Promise<PurgeCounts> {
  const final = pass > 1;
  let counts = emptyPurgeCounts();
  counts = addPurgeCounts(counts, await acts.deleteUserSchedules.executeWithOptions({ ...quick, summary: `pass ${pass}: delete the user's schedules` }, [user]));
  counts = addPurgeCounts(counts, await acts.deleteUserWorkflows.executeWithOptions({ ...long, summary: `pass ${pass}: terminate and delete the user's workflows` }, [user]));
  counts = addPurgeCounts(
    counts,
    await acts.purgeUserRows.executeWithOptions({ ...long, summary: `pass ${pass}: delete PostgreSQL rows${final ? ' (one transaction, user lock)' : ' (paged)'}` }, [{ ...user, final }]),
  );
  counts = addPurgeCounts(counts, await acts.dropUserVectors.executeWithOptions({ ...quick, summary: `pass ${pass}: drop Chroma collections` }, [user]));
  return counts;
}

/**
 * PurgeUser: deletes everything stored about one user, in three passes.
 *   1. schedules (no new digest or nudge runs), the user's other workflow executions (terminated,
 *      then deleted), PostgreSQL rows in pages, the user's Chroma collections;
 *   2. the same again, the rows in one transaction under the user's write lock: whatever arrived
 *      while pass 1 ran (a message, the last activity of a terminated extraction) goes too;
 *   3. the user's payload key is destroyed (when the codec provides the hook), and the same pass
 *      again: what raced pass 2 and could no longer run goes, its caller answered at once;
 *   4. the audit row — tenant, keyed user ref, times, counts, no user id or text — is completed.
 * Data that arrives after pass 3 is a new life of the user id, not a leftover (docs/security.md).
 */
export async function PurgeUser(input: PurgeUserInput): Promise<PurgeUserResult> {
  const requestedAt = input.requestedAt ?? workflowInfo().startTime.toISOString();
  const user = { userKey: input.userKey };
  await acts.beginPurgeAudit.executeWithOptions({ ...quick, summary: 'audit: purge requested' }, [{ tenantId: input.tenantId, userRef: input.userRef, requestedAt }]);

  let counts = emptyPurgeCounts();
  for (const pass of [1, 2] as const) counts = addPurgeCounts(counts, await purgePass(pass, user));
  counts = addPurgeCounts(counts, await acts.destroyUserDataKey.executeWithOptions({ ...quick, summary: 'destroy the user data key' }, [user]));
  // A request that raced pass 2 — started after it listed the workflows, written before its last
  // transaction — leaves a workflow running under the key just destroyed (a reminder's timer, a
  // conversation's idle timer, an activity retried with an input it can no longer decrypt, its
  // caller waiting on it). It cannot take another step: the same pass again ends and erases it.
  if (patched(PASS_AFTER_KEY_PATCH)) counts = addPurgeCounts(counts, await purgePass(3, user));

  const completedAt = new Date().toISOString();
  await acts.completePurgeAudit.executeWithOptions({ ...quick, summary: 'audit: purge completed' }, [{ completedAt, counts }]);
  log.info('user purged', { tenantId: input.tenantId, userRef: input.userRef, counts });
  return { tenantId: input.tenantId, userRef: input.userRef, requestedAt, completedAt, counts };
}
