import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listNotifications, type LiveEvent, type NotificationHub } from '../../proactive/notifications';
import { userKeyOf } from '../auth';
import { ConcurrencyGate } from '../concurrency';
import { apiKeyOf, userOf } from '../rate-limits';
import type { ApiDeps } from '../deps';
import { notificationToView, reminderToView } from '../proactive-views';
import { userParams } from '../schemas';
import { PAGE_SESSION_ROUTE } from '../page-session';

const HEARTBEAT_MS = 15_000;
const REPLAY_LIMIT = 200;
/** What a refused stream is told to wait (the page's EventSource retries on its own after `retry:`). */
const STREAM_RETRY_AFTER_SECONDS = 30;

function frame(e: LiveEvent): string {
  const data = e.event === 'notification' ? notificationToView(e.notification) : reminderToView(e.reminder);
  // Only notifications carry an id: Last-Event-ID then resumes the notification sequence.
  return `${e.event === 'notification' ? `id: ${e.id}\n` : ''}event: ${e.event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * GET /v1/users/{userId}/events — Server-Sent Events: fired reminders, digests and nudges
 * (`event: notification`, id = notification sequence) and reminder status changes
 * (`event: reminder`). Bearer auth like every /v1 route, or the memory page's session cookie for
 * this user (the stream then ends when the session does). A reconnect with `Last-Event-ID`
 * (or `?after=`) first replays what was missed. At most SSE_MAX_STREAMS_PER_USER streams per
 * (tenant, user) and SSE_MAX_STREAMS_PER_KEY per API key are open at once (429
 * `concurrency_limited` past either); a stream's slot is freed when its connection closes.
 */
export const eventRoutes =
  (deps: ApiDeps, hub: NotificationHub): FastifyPluginAsyncZod =>
  async (app) => {
    const open = new Set<ServerResponse>();
    const streams = new ConcurrencyGate('event streams');
    const caps = deps.config.eventStreams;
    // Long-lived streams would keep close() waiting forever.
    app.addHook('preClose', async () => {
      for (const res of open) res.end();
    });

    app.get(
      '/v1/users/:userId/events',
      {
        config: PAGE_SESSION_ROUTE,
        schema: {
          summary: 'Live stream (text/event-stream) of notifications and reminder status changes',
          params: userParams,
          querystring: z.object({ after: z.coerce.number().int().min(0).optional() }),
        },
      },
      async (request, reply) => {
        const userId = userKeyOf(request);
        const header = request.headers['last-event-id'];
        const lastId = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : request.query.after;
        // Before the hijack, so a refusal is an ordinary JSON error with Retry-After.
        const releaseSlot = streams.acquire(
          [
            { key: userOf(request) ?? `u|${userId}`, scope: 'for this user', max: caps.perUser },
            { key: apiKeyOf(request), scope: 'for this API key', max: caps.perKey },
          ],
          STREAM_RETRY_AFTER_SECONDS,
        );

        reply.hijack();
        const res = reply.raw;
        // Headers set by hooks (the page's security headers) would be lost with the hijack.
        res.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
        open.add(res);

        // Subscribe before replaying so nothing falls between the two; duplicates are skipped by seq.
        let replaying = true;
        let sentSeq = lastId ?? 0;
        const queued: LiveEvent[] = [];
        const deliver = (e: LiveEvent) => {
          if (e.event === 'notification') {
            if (e.notification.seq <= sentSeq) return;
            sentSeq = e.notification.seq;
          }
          res.write(frame(e));
        };
        const unsubscribe = hub.subscribe(userId, (e) => (replaying ? queued.push(e) : deliver(e)));
        const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
        // The stream ends with the page session: the reconnect then meets the 401 and the page says so.
        const session = request.pageSession;
        const expiry = session ? setTimeout(() => res.end(), Math.max(0, session.expiresAt.getTime() - Date.now())) : undefined;
        const cleanup = () => {
          clearInterval(heartbeat);
          clearTimeout(expiry);
          unsubscribe();
          open.delete(res);
          releaseSlot();
        };
        res.on('close', cleanup);

        res.write(`retry: 3000\nevent: ready\ndata: ${JSON.stringify({ userId: request.params.userId })}\n\n`);
        if (lastId !== undefined) {
          try {
            const missed = await listNotifications(deps, { userId, limit: REPLAY_LIMIT, afterSeq: lastId });
            for (const n of missed) deliver({ event: 'notification', id: String(n.seq), notification: n });
          } catch (err) {
            request.log.warn({ err }, 'event replay failed');
          }
        }
        replaying = false;
        for (const e of queued.splice(0)) deliver(e);
      },
    );
  };
