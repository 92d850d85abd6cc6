import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { IANAZone } from 'luxon';
import { z } from 'zod';
import { digestStore } from '../../adapters/postgres/digest-repository';
import { notificationStore } from '../../adapters/postgres/notification-repository';
import { settingsStore } from '../../adapters/postgres/settings-repository';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { digestDay } from '../../core/proactive/digest-schedule';
import { settingsOrDefaults, userSettings } from '../../services/digest';
import { digestWorkflow } from '../../../workflows';
import { userSearchAttributes } from '../../../workflows/search-attributes';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { digestsQuery, digestView, listNotificationsQuery, notificationView, settingsBody, settingsView } from '../proactive-schemas';
import { digestToView, notificationToView } from '../proactive-views';
import { userParams } from '../schemas';
import { PAGE_SESSION_ROUTE } from '../page-session';
import { workflowCallError } from '../workflow-failures';

/** Notifications, settings (which drive the digest and nudge schedules) and daily digests. */
export const proactiveRoutes =
  (deps: ApiDeps, opts: { onSettingsChanged: (userId: string) => Promise<void> }): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/users/:userId/notifications',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'Notifications (fired reminders, digests, nudges), newest first', params: userParams, querystring: listNotificationsQuery, response: { 200: z.object({ notifications: z.array(notificationView) }) } } },
      async (request) => {
        const q = request.query;
        const list = await notificationStore.list(deps.pool, userKeyOf(request), { limit: q.limit, kind: q.kind, unread: q.unread === 'true' });
        return { notifications: list.map(notificationToView) };
      },
    );

    app.post(
      '/v1/users/:userId/notifications/read',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'Mark notifications read', params: userParams, body: z.object({ ids: z.array(z.string().uuid()).min(1).max(200) }), response: { 200: z.object({ updated: z.number() }) } } },
      async (request) => ({ updated: await notificationStore.markRead(deps.pool, userKeyOf(request), request.body.ids, new Date()) }),
    );

    app.get(
      '/v1/users/:userId/settings',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'Timezone, digest time and proactive (nudge) settings', params: userParams, response: { 200: settingsView } } },
      async (request) => settingsOrDefaults(deps, userKeyOf(request)),
    );

    app.put(
      '/v1/users/:userId/settings',
      {
        schema: {
          summary: 'Change settings; the digest and nudge schedules follow (timezone, digest time, opt-out)',
          params: userParams,
          body: settingsBody,
          response: { 200: settingsView },
        },
      },
      async (request) => {
        const userId = userKeyOf(request);
        const body = request.body;
        if (body.timezone !== undefined && !IANAZone.isValidZone(body.timezone)) {
          throw new MemoryServiceError(ErrorCode.validationFailed, `unknown IANA timezone "${body.timezone}"`, { field: 'timezone' });
        }
        const current = await userSettings(deps, userId);
        const proactive = body.proactive ? { ...current.proactive, ...body.proactive, quietHours: body.proactive.quietHours ?? current.proactive.quietHours } : undefined;
        await settingsStore.update(deps.pool, userId, { timezone: body.timezone, digestTime: body.digestTime, proactive });
        try {
          await opts.onSettingsChanged(userId);
        } catch (err) {
          // Settings are stored; a retry of the same PUT brings the schedules in line.
          throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'settings saved, but the digest/nudge schedules could not be updated', { userId }, { cause: err });
        }
        return userSettings(deps, userId);
      },
    );

    app.get(
      '/v1/users/:userId/digests',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'Daily digests of the last `days` local days, newest first', params: userParams, querystring: digestsQuery, response: { 200: z.object({ digests: z.array(digestView) }) } } },
      async (request) => {
        const userId = userKeyOf(request);
        const settings = await settingsOrDefaults(deps, userId);
        const today = digestDay(new Date(), settings.timezone).date;
        const digests = await digestStore.recent(deps.pool, userId, today, request.query.days);
        return { digests: digests.map(digestToView) };
      },
    );

    app.post(
      '/v1/users/:userId/digests',
      { config: PAGE_SESSION_ROUTE, schema: { summary: "Write today's digest now (DigestWorkflow; not pushed as a notification)", params: userParams, response: { 201: digestView } } },
      async (request, reply) => {
        const userId = userKeyOf(request);
        const settings = await userSettings(deps, userId);
        const today = digestDay(new Date(), settings.timezone).date;
        const workflowId = `digest:${userId}:now:${today}:${Date.now()}`;
        try {
          await deps.temporal.workflow.execute(digestWorkflow, {
            taskQueue: deps.taskQueue,
            workflowId,
            args: [{ userId, notify: false }],
            typedSearchAttributes: userSearchAttributes(userId),
            staticSummary: `Digest for ${userId} on request`,
          });
        } catch (err) {
          throw workflowCallError(err, { workflowId, failed: 'writing the digest failed' });
        }
        const [digest] = await digestStore.recent(deps.pool, userId, today, 1);
        if (!digest) throw new MemoryServiceError(ErrorCode.internal, 'digest missing after writing it', { workflowId });
        return reply.status(201).send(digestToView(digest));
      },
    );
  };
