import { log, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { createPrivacyActivities } from '../../activities/privacy/privacy';
import { addPurgeCounts, emptyPurgeCounts } from '../../src/core/privacy/purge';
import type { PurgeUserInput, PurgeUserResult } from '../../src/privacy/contract';

type Activities = ReturnType<typeof createPrivacyActivities>;

// An erasure must finish: every step is idempotent, so it is retried without an attempt limit
// (a store that is down delays the purge, visibly in Temporal UI, instead of failing it).
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' };
const quick: ActivityOptions = { startToCloseTimeout: '1m', retry };
// Deleting a large user's rows or executions takes a while; progress is heartbeated.
const long: ActivityOptions = { startToCloseTimeout: '30m', heartbeatTimeout: '1m', retry };
const acts = proxyActivities<Activities>(quick);

export type { PurgeUserInput, PurgeUserResult };

/**
 * PurgeUser: deletes everything stored about one user, in two passes.
 *   1. schedules (no new digest or nudge runs), the user's other workflow executions (terminated,
 *      then deleted), PostgreSQL rows in pages, the user's Chroma collections;
 *   2. the same again, the rows in one transaction under the user's write lock: whatever arrived
 *      while pass 1 ran (a message, the last activity of a terminated extraction) goes too;
 *   3. the user's payload key is destroyed (when the codec provides the hook), and the audit row —
 *      tenant, keyed user ref, times, counts, no user id or text — is completed.
 * Data that arrives after pass 2 is a new life of the user id, not a leftover (docs/security.md).
 */
export async function PurgeUser(input: PurgeUserInput): Promise<PurgeUserResult> {
  const requestedAt = input.requestedAt ?? workflowInfo().startTime.toISOString();
  const user = { userKey: input.userKey };
  await acts.beginPurgeAudit.executeWithOptions({ ...quick, summary: 'audit: purge requested' }, [{ tenantId: input.tenantId, userRef: input.userRef, requestedAt }]);

  let counts = emptyPurgeCounts();
  for (const pass of [1, 2] as const) {
    const final = pass === 2;
    counts = addPurgeCounts(counts, await acts.deleteUserSchedules.executeWithOptions({ ...quick, summary: `pass ${pass}: delete the user's schedules` }, [user]));
    counts = addPurgeCounts(counts, await acts.deleteUserWorkflows.executeWithOptions({ ...long, summary: `pass ${pass}: terminate and delete the user's workflows` }, [user]));
    counts = addPurgeCounts(
      counts,
      await acts.purgeUserRows.executeWithOptions({ ...long, summary: `pass ${pass}: delete PostgreSQL rows${final ? ' (one transaction, user lock)' : ' (paged)'}` }, [{ ...user, final }]),
    );
    counts = addPurgeCounts(counts, await acts.dropUserVectors.executeWithOptions({ ...quick, summary: `pass ${pass}: drop Chroma collections` }, [user]));
  }
  counts = addPurgeCounts(counts, await acts.destroyUserDataKey.executeWithOptions({ ...quick, summary: 'destroy the user data key' }, [user]));

  const completedAt = new Date().toISOString();
  await acts.completePurgeAudit.executeWithOptions({ ...quick, summary: 'audit: purge completed' }, [{ completedAt, counts }]);
  log.info('user purged', { tenantId: input.tenantId, userRef: input.userRef, counts });
  return { tenantId: input.tenantId, userRef: input.userRef, requestedAt, completedAt, counts };
}
