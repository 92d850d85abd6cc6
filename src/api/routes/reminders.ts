import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { cancelReminder, createReminder, dismissReminder, getReminder, listReminders, rescheduleReminder, resolveDue, snoozeReminder, type ReminderOutcome } from '../../proactive/reminders';
import { registersNoUser, userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { createReminderBody, listRemindersQuery, reminderParams, reminderView, rescheduleBody, snoozeBody } from '../proactive-schemas';
import { reminderToView } from '../proactive-views';
import { userParams } from '../schemas';
import { PAGE_SESSION_ROUTE } from '../page-session';

const action = z.enum(['snooze', 'dismiss', 'cancel', 'reschedule']);
const accepted = z.object({ id: z.string(), accepted: z.literal(true), action, workflowId: z.string() });
const applied = accepted.extend({ reminder: reminderView });

/** 200 with the reminder as the list now shows it, or 202 when the list had not caught up in time. */
function answer(outcome: ReminderOutcome, act: z.infer<typeof action>) {
  const base = { id: outcome.reminder.id, accepted: true as const, action: act, workflowId: outcome.reminder.workflowId };
  return outcome.settled ? { status: 200 as const, body: { ...base, reminder: reminderToView(outcome.reminder) } } : { status: 202 as const, body: base };
}

/**
 * Reminders: create (starts a ReminderWorkflow; 202 `pending` when Temporal did not answer the
 * start in time, docs/proactive.md), list, and the user's answers — snooze and
 * dismiss are signals, DELETE cancels the workflow, PATCH is the workflow's validated update.
 * The ReminderWorkflow is the only writer of a reminder's state. An answer returns 200 once the
 * list shows the workflow's state after it (so a GET right after never shows an older state);
 * if that takes longer than REMINDER_ACCEPT_TIMEOUT_MS it returns 202 with the workflow id, and
 * the new state arrives through the list and the event stream as soon as the workflow records it.
 */
export const reminderRoutes =
  (deps: ApiDeps, opts: { onUserActive?: (userId: string) => Promise<void> } = {}): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/v1/users/:userId/reminders',
      {
        config: {
          ...PAGE_SESSION_ROUTE,
          // What createReminder refuses first for a user without reminders: the due time, zone and rule.
          beforeRegistration: async (request) => {
            await resolveDue(deps, { userId: userKeyOf(request), ...(request.body as z.infer<typeof createReminderBody>) }, new Date());
          },
          takesBackRegistration: true,
        },
        schema: {
          summary: 'Create a reminder (one ReminderWorkflow with a durable timer; recurring with rrule)',
          params: userParams,
          body: createReminderBody,
          response: { 200: reminderView, 201: reminderView, 202: reminderView.extend({ pending: z.literal(true) }) },
        },
      },
      async (request, reply) => {
        const userId = userKeyOf(request);
        const { reminder, created, pending } = await createReminder(deps, { userId, ...request.body }, new Date());
        // Temporal took the row's start without answering: its schedules wait for the user's next activity.
        if (pending) return reply.status(202).send({ ...reminderToView(reminder), pending: true as const });
        if (opts.onUserActive) await opts.onUserActive(userId).catch((err: unknown) => request.log.warn({ err }, 'proactive schedules not ensured'));
        return reply.status(created ? 201 : 200).send(reminderToView(reminder));
      },
    );

    app.get(
      '/v1/users/:userId/reminders',
      { config: PAGE_SESSION_ROUTE, schema: { summary: 'List reminders, newest due first', params: userParams, querystring: listRemindersQuery, response: { 200: z.object({ reminders: z.array(reminderView) }) } } },
      async (request) => {
        const reminders = await listReminders(deps, { userId: userKeyOf(request), ...request.query });
        return { reminders: reminders.map(reminderToView) };
      },
    );

    app.get(
      '/v1/users/:userId/reminders/:id',
      { schema: { summary: 'One reminder', params: reminderParams, response: { 200: reminderView } } },
      async (request) => {
        return reminderToView(await getReminder(deps, { userId: userKeyOf(request), id: request.params.id }));
      },
    );

    app.post(
      '/v1/users/:userId/reminders/:id/snooze',
      { config: { ...PAGE_SESSION_ROUTE, registersUser: registersNoUser }, schema: { summary: '"稍后": fire again in `seconds` (snoozeSignal)', params: reminderParams, body: snoozeBody, response: { 200: applied, 202: accepted } } },
      async (request, reply) => {
        const { status, body } = answer(await snoozeReminder(deps, userKeyOf(request), request.params.id, request.body.seconds), 'snooze');
        return reply.status(status).send(body);
      },
    );

    app.post(
      '/v1/users/:userId/reminders/:id/dismiss',
      { config: { ...PAGE_SESSION_ROUTE, registersUser: registersNoUser }, schema: { summary: '"知道了": this occurrence is done (dismissSignal)', params: reminderParams, response: { 200: applied, 202: accepted } } },
      async (request, reply) => {
        const { status, body } = answer(await dismissReminder(deps, userKeyOf(request), request.params.id), 'dismiss');
        return reply.status(status).send(body);
      },
    );

    app.patch(
      '/v1/users/:userId/reminders/:id',
      {
        config: { registersUser: registersNoUser },
        schema: {
          summary: 'Move the due time (rescheduleUpdate, validated by the workflow)',
          params: reminderParams,
          body: rescheduleBody,
          response: { 200: z.object({ id: z.string(), status: z.string(), dueAt: z.string(), occurrence: z.number(), version: z.number() }), 202: accepted },
        },
      },
      async (request, reply) => {
        const outcome = await rescheduleReminder(deps, userKeyOf(request), request.params.id, request.body.dueAt);
        if (!outcome.settled) return reply.status(202).send(answer(outcome, 'reschedule').body);
        const { state } = outcome;
        return reply.status(200).send({ id: state.reminderId, status: state.status, dueAt: state.dueAt, occurrence: state.occurrence, version: state.version });
      },
    );

    app.delete(
      '/v1/users/:userId/reminders/:id',
      { schema: { summary: 'Cancel a reminder (and a recurring series)', params: reminderParams, response: { 200: applied, 202: accepted } } },
      async (request, reply) => {
        const { status, body } = answer(await cancelReminder(deps, userKeyOf(request), request.params.id), 'cancel');
        return reply.status(status).send(body);
      },
    );
  };
