import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { PURGE_WORKFLOW_TYPE, purgeWorkflowId } from '../../core/privacy/purge';
import { openUserExport, spoolUserExport } from '../../privacy/user-export';
import { assertUserKey } from '../../privacy/user-purge';
import { purgeUserRef } from '../../security/purge-user-ref';
import { PrivacyWorkflows, type PurgeUserWorkflow } from '../../privacy/contract';
import { MemoryDecisionsKey, MemoryTenantKey } from '../../../workflows/shared/search-attributes';
import { userKeyOf } from '../auth';
import { ConcurrencyGate, Semaphore } from '../concurrency';
import type { ApiDeps } from '../deps';
import { userParams } from '../schemas';
import { workflowCallError } from '../workflow-failures';

/** What a refused export is told to wait: an export's snapshot is read in seconds. */
const EXPORT_RETRY_AFTER_SECONDS = 10;

/** How long `?wait=true` holds the request before answering 202 (the purge carries on). */
const PURGE_WAIT_MS = 120_000;

const purgeCounts = z.object({
  postgres: z.record(z.string(), z.number()),
  chroma: z.record(z.string(), z.number()),
  schedulesDeleted: z.number(),
  workflowsTerminated: z.number(),
  workflowsDeleted: z.number(),
  dataKeyDestroyed: z.boolean(),
});

/**
 * Privacy: a user may take everything stored about them, and have all of it erased.
 * Both take the user key (what every store is keyed by) separately from the tenant's own user id:
 * today they are the same path parameter; with tenancy the key comes from `request.userKey`.
 */
export const privacyRoutes =
  (deps: ApiDeps, opts: { onPurged?: (userKey: string) => void } = {}): FastifyPluginAsyncZod =>
  async (app) => {
    // Exports open at once per tenant, held from the snapshot to the end of the download (a spool
    // file and a socket each; the database connection only while the snapshot is read).
    const exportsOpen = new ConcurrencyGate('exports');
    // Snapshots read at once in this process, each on a pooled connection: fewer than the pool.
    const snapshots = new Semaphore('export snapshots', deps.config.exports.snapshotsAtOnce);
    app.get(
      '/v1/users/:userId/export',
      {
        schema: {
          summary: 'Export everything stored about the user as one JSON document (streamed; memories with their history, messages, episodes, reminders, notifications, digests, settings, graph)',
          params: userParams,
        },
      },
      async (request, reply) => {
        const userKey = userKeyOf(request);
        const limits = deps.config.exports;
        const release = exportsOpen.acquire([{ key: `t|${request.tenantId!}`, scope: 'for this tenant', max: limits.concurrencyPerTenant }], EXPORT_RETRY_AFTER_SECONDS);
        let spooled;
        let fileName;
        try {
          const exported = await openUserExport(deps, { userKey, externalUserId: request.params.userId, now: new Date() });
          fileName = exported.fileName;
          spooled = await snapshots.run(() => spoolUserExport(exported, { deadlineMs: limits.snapshotTimeoutMs }), limits.snapshotTimeoutMs);
          // The first unit was spent before the export began; the pages it read cost the rest.
          await app.budgets.charge(request, 'exports', exported.stats.pages - 1);
        } catch (err) {
          release();
          throw err;
        }
        spooled.stream.once('close', release);
        return reply
          .header('content-type', 'application/json; charset=utf-8')
          .header('content-length', String(spooled.bytes))
          .header('content-disposition', `attachment; filename="${fileName}"`)
          .header('cache-control', 'no-store')
          .send(spooled.stream);
      },
    );

    app.delete(
      '/v1/users/:userId',
      {
        // Erasure is the tenant's decision: a per-user key (a device's config) cannot purge.
        config: { tenantOnly: true },
        schema: {
          summary: 'Erase everything stored about the user (PurgeUser workflow): rows, vectors, schedules, workflow histories; ?wait=true waits for it',
          params: userParams,
          querystring: z.object({ wait: z.enum(['true', 'false']).default('false') }),
          response: {
            200: z.object({ workflowId: z.string(), runId: z.string(), result: z.object({ requestedAt: z.string(), completedAt: z.string(), counts: purgeCounts }) }),
            202: z.object({ workflowId: z.string(), runId: z.string() }),
          },
        },
      },
      async (request, reply) => {
        const userKey = userKeyOf(request);
        const tenantId = request.tenantId!;
        assertUserKey(userKey);
        const userRef = purgeUserRef(deps.secrets, userKey);
        const workflowId = purgeWorkflowId(tenantId, userRef);
        let handle;
        try {
          handle = await deps.temporal.workflow.start<PurgeUserWorkflow>(PrivacyWorkflows.purgeUser, {
            taskQueue: deps.taskQueue,
            workflowId,
            // A second request while one runs joins it; a finished purge is simply run again.
            workflowIdConflictPolicy: 'USE_EXISTING',
            args: [{ userKey, tenantId, userRef, requestedAt: new Date().toISOString() }],
            // No user key here (no MemoryUserId either): the summary outlives the purge in Temporal UI.
            // Tenant and decision only, so an auditor finds every purge (docs/audit.md).
            typedSearchAttributes: [
              { key: MemoryTenantKey, value: tenantId },
              { key: MemoryDecisionsKey, value: ['purge'] },
            ],
            staticSummary: `${PURGE_WORKFLOW_TYPE}: erase every stored trace of one user of tenant ${tenantId} (ref ${userRef.slice(0, 8)})`,
          });
        } catch (err) {
          throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable: purge not started', { workflowId }, { cause: err });
        }
        const runId = handle.firstExecutionRunId;
        const finished = handle.result().then((r) => {
          opts.onPurged?.(userKey);
          return r;
        });
        finished.catch(() => {});
        if (request.query.wait !== 'true') return reply.status(202).send({ workflowId, runId });
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), PURGE_WAIT_MS);
        });
        try {
          const result = await Promise.race([finished, timeout]);
          if (!result) return reply.status(202).send({ workflowId, runId });
          return reply.status(200).send({ workflowId, runId, result: { requestedAt: result.requestedAt, completedAt: result.completedAt, counts: result.counts } });
        } catch (err) {
          throw workflowCallError(err, { workflowId, failed: 'the purge failed', unavailable: 'Temporal unavailable while waiting for the purge' });
        } finally {
          clearTimeout(timer);
        }
      },
    );
  };
