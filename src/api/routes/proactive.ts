import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { recentDigests, writeDigestNow } from '../../proactive/digest';
import { listNotifications, markNotificationsRead } from '../../proactive/notifications';
import { assertKnownTimeZone, settingsOrDefaults, updateSettings } from '../../account/settings';
import { registersNoUser, userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { digestsQuery, digestView, listNotificationsQuery, notificationView, settingsBody, settingsView } from '../proactive-schemas';
import { digestToView, notificationToView } from '../proactive-views';
import { userParams } from '../schemas';
import { PAGE_SESSION_ROUTE } from '../page-session';

/** Notifications, settings (which drive the digest and nudge schedules) and daily digests. */
export const proactiveRoutes =
  (deps: ApiDeps, opts: { onSettingsChanged: (userId: string) => Promise<void> }): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/users/:userId/notifications',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'Notifications (fired reminders, digests, nudges), newest first', params: userParams, querystring: listNotificationsQuery, response: { 200: z.object({ notifications: z.array(notificationView) }) } } },
      async (request) => {
        const q = request.query;
        const list = await listNotifications(deps, { userId: userKeyOf(request), limit: q.limit, kind: q.kind, unread: q.unread === 'true' });
        return { notifications: list.map(notificationToView) };
      },
    );

    app.post(
      '/v1/users/:userId/notifications/read',
      { config: { ...PAGE_SESSION_ROUTE, registersUser: registersNoUser }, schema: { summary: 'Mark notifications read', params: userParams, body: z.strictObject({ ids: z.array(z.string().uuid()).min(1).max(200) }), response: { 200: z.object({ updated: z.number() }) } } },
      async (request) => ({ updated: await markNotificationsRead(deps, { userId: userKeyOf(request), ids: request.body.ids, at: new Date() }) }),
    );

    app.get(
      '/v1/users/:userId/settings',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'Timezone, digest time and proactive (nudge) settings', params: userParams, response: { 200: settingsView } } },
      async (request) => settingsOrDefaults(deps, userKeyOf(request)),
    );

    app.put(
      '/v1/users/:userId/settings',
      {
        config: { beforeRegistration: (request) => assertKnownTimeZone((request.body as z.infer<typeof settingsBody>).timezone), takesBackRegistration: true },
        schema: {
          summary: 'Change settings; the digest and nudge schedules follow (timezone, digest time, opt-out)',
          params: userParams,
          body: settingsBody,
          response: { 200: settingsView },
        },
      },
      async (request) => {
        const userId = userKeyOf(request);
        const settings = await updateSettings(deps, { userId, ...request.body });
        try {
          await opts.onSettingsChanged(userId);
        } catch (err) {
          // Settings are stored; a retry of the same PUT brings the schedules in line.
          throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'settings saved, but the digest/nudge schedules could not be updated', { userId }, { cause: err });
        }
        return settings;
      },
    );

    app.get(
      '/v1/users/:userId/digests',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'Daily digests of the last `days` local days, newest first', params: userParams, querystring: digestsQuery, response: { 200: z.object({ digests: z.array(digestView) }) } } },
      async (request) => {
        const digests = await recentDigests(deps, { userId: userKeyOf(request), days: request.query.days, now: new Date() });
        return { digests: digests.map(digestToView) };
      },
    );

    app.post(
      '/v1/users/:userId/digests',
      {
        config: { ...PAGE_SESSION_ROUTE, takesBackRegistration: true },
        schema: {
          summary: "Write today's digest now (DigestWorkflow; not pushed as a notification)",
          params: userParams,
          response: { 201: digestView, 202: z.object({ workflowId: z.string(), pending: z.literal(true) }) },
        },
      },
      async (request, reply) => {
        const written = await writeDigestNow(deps, { userId: userKeyOf(request), now: new Date() });
        if (written.pending) return reply.status(202).send({ workflowId: written.workflowId, pending: true as const });
        return reply.status(201).send(digestToView(written.digest));
      },
    );
  };
