import { temporal } from '@temporalio/proto';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../src/adapters/postgres/pool';
import { MemoryClient } from '../src/client/index';
import { digestCalendarSpec } from '../src/core/proactive/digest-schedule';
import { storeAndAnnounce } from '../src/proactive/notifications';
import { PostgresUnitOfWork } from '../src/adapters/postgres/unit-of-work';
import { digestScheduleId, nudgeScheduleId } from '../src/proactive/proactive-schedules';
import { digestWorkflow, extractMemoriesWorkflow, nudgeWorkflow } from '../workflows';
import { ReminderStatusKey } from '../workflows/shared/search-attributes';
import { createTestContext, OTHER_TENANT_KEY, TEST_KEY, type TestContext } from './support/harness';
import { openSse } from './support/sse';
import { poll } from './support/poll';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();


async function reminder(user: string, id: string) {
  return (await ctx.call('GET', `/v1/users/${user}/reminders/${id}`)).body;
}

async function history(workflowId: string): Promise<string[]> {
  const h = await ctx.runtime.temporal.workflow.getHandle(workflowId).fetchHistory();
  return (h.events ?? []).map((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? String(temporal.api.enums.v1.EventType[e.eventType ?? 0]));
}

describe('reminders API', () => {
  it('refuses what cannot be a reminder with 400 and a machine-readable code', async () => {
    const user = `${ctx.prefix}-bad`;
    const cases: [unknown, string][] = [
      [{ text: '开会', dueAt: inSeconds(-60) }, 'dueAt'],
      [{ text: '开会', dueAt: inSeconds(60), timezone: 'Mars/Olympus' }, 'timezone'],
      [{ text: '开会', dueAt: 'next tuesday-ish' }, 'dueAt'],
      [{ text: '开会', dueAt: inSeconds(60), rrule: 'FREQ=SECONDLY' }, 'rrule'],
      [{ text: '开会', dueAt: '2200-01-01T00:00:00Z' }, 'dueAt'],
    ];
    for (const [body, field] of cases) {
      const res = await ctx.call('POST', `/v1/users/${user}/reminders`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.field).toBe(field);
    }
    expect((await ctx.call('POST', `/v1/users/${user}/reminders`, { dueAt: inSeconds(60) })).status).toBe(400);
    expect((await ctx.call('GET', `/v1/users/${user}/reminders`)).body.reminders).toEqual([]);
    const missing = await ctx.call('POST', `/v1/users/${user}/reminders/00000000-0000-4000-8000-000000000000/snooze`, { seconds: 600 });
    expect(missing.status).toBe(404);
  });

  it('a reminder due in 3 s fires within seconds, is pushed over SSE, then snooze and dismiss work through the API', async () => {
    const user = `${ctx.prefix}-fire`;
    const stream = await openSse(`${ctx.baseUrl}/v1/users/${user}/events`, TEST_KEY);
    await stream.next((e) => e.event === 'ready');

    const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: '提醒：开会', dueAt: inSeconds(3), timezone: 'Asia/Shanghai' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ status: 'scheduled', timezone: 'Asia/Shanghai', workflowId: `reminder:${ctx.userKey(user)}:${created.body.id}` });
    const id = created.body.id as string;

    const pushed = await stream.next((e) => e.event === 'notification' && e.data.reminderId === id, 15_000);
    expect(pushed.data).toMatchObject({ kind: 'reminder', body: '提醒：开会' });
    expect(Number(pushed.id)).toBe(pushed.data.seq);
    const fired = await poll(() => reminder(user, id), (r) => r.status === 'fired');
    expect(fired.status).toBe('fired');
    expect(new Date(fired.firedAt).getTime() - new Date(fired.dueAt).getTime()).toBeLessThan(5_000);
    expect(new Date(fired.firedAt).getTime()).toBeGreaterThanOrEqual(new Date(fired.dueAt).getTime());
    const listed = await ctx.call('GET', `/v1/users/${user}/reminders?status=fired`);
    expect(listed.body.reminders.map((r: { id: string }) => r.id)).toEqual([id]);
    const notes = await ctx.call('GET', `/v1/users/${user}/notifications`);
    expect(notes.body.notifications[0]).toMatchObject({ kind: 'reminder', reminderId: id, body: '提醒：开会' });

    expect((await ctx.call('POST', `/v1/users/${user}/reminders/${id}/snooze`, { seconds: 10 })).status).toBe(400);
    const snoozed = await ctx.call('POST', `/v1/users/${user}/reminders/${id}/snooze`, { seconds: 600 });
    // 200 once the list shows the workflow's new state: a GET right after reads it.
    expect(snoozed.status, JSON.stringify(snoozed.body)).toBe(200);
    expect(snoozed.body.reminder).toMatchObject({ status: 'snoozed', snoozeCount: 1 });
    const s = await reminder(user, id);
    expect(s.status).toBe('snoozed');
    expect(s.version).toBeGreaterThanOrEqual(snoozed.body.reminder.version);
    expect(new Date(s.snoozedUntil).getTime() - Date.now()).toBeGreaterThan(500_000);
    await stream.next((e) => e.event === 'reminder' && e.data.id === id && e.data.status === 'snoozed');

    expect((await ctx.call('POST', `/v1/users/${user}/reminders/${id}/dismiss`, {})).status).toBe(200);
    const d = await reminder(user, id);
    expect(d.status).toBe('dismissed');
    expect((await ctx.call('POST', `/v1/users/${user}/reminders/${id}/dismiss`, {})).status).toBe(409);
    stream.close();

    // The whole story in Temporal: the timer, the signals, the outcome.
    const handle = ctx.runtime.temporal.workflow.getHandle(fired.workflowId);
    expect((await handle.result()).status).toBe('dismissed');
    const events = await history(fired.workflowId);
    expect(events).toContain('EVENT_TYPE_TIMER_STARTED');
    expect(events).toContain('EVENT_TYPE_TIMER_FIRED');
    expect(events.indexOf('snoozeSignal')).toBeGreaterThan(events.indexOf('EVENT_TYPE_TIMER_FIRED'));
    expect(events.indexOf('dismissSignal')).toBeGreaterThan(events.indexOf('snoozeSignal'));
    expect((await handle.describe()).typedSearchAttributes.get(ReminderStatusKey)).toBe('dismissed');
  });

  it('still fires when the worker was stopped and started again before the due time', async () => {
    const user = `${ctx.prefix}-restart`;
    const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: 'call mom', dueAt: inSeconds(5) });
    expect(created.status).toBe(201);
    await poll(() => history(created.body.workflowId), (e) => e.includes('EVENT_TYPE_TIMER_STARTED'));
    await ctx.stopWorker();
    await new Promise((r) => setTimeout(r, 6_000));
    expect((await reminder(user, created.body.id)).status).toBe('scheduled'); // nobody to fire it yet
    await ctx.startWorker();
    const fired = await poll(() => reminder(user, created.body.id), (r) => r.status === 'fired', 30_000);
    expect(fired.status).toBe('fired');
    const notes = await ctx.call('GET', `/v1/users/${user}/notifications?kind=reminder`);
    expect(notes.body.notifications).toHaveLength(1);
  });

  it('DELETE cancels; a repeated requestId returns the same reminder; another tenant’s user of that id has none', async () => {
    const user = `${ctx.prefix}-cancel`;
    const body = { text: '交报告', dueAt: inSeconds(3600), requestId: 'req-1', rrule: 'FREQ=WEEKLY;BYDAY=FR;BYHOUR=9;BYMINUTE=0', timezone: 'Europe/Berlin' };
    const first = await ctx.call('POST', `/v1/users/${user}/reminders`, body);
    const second = await ctx.call('POST', `/v1/users/${user}/reminders`, body);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(first.body.rrule).toBe(body.rrule);
    const foreign = await ctx.call('GET', `/v1/users/${user}/reminders`, undefined, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    expect(foreign.status).toBe(200);
    expect(foreign.body.reminders).toEqual([]);

    expect((await ctx.call('DELETE', `/v1/users/${user}/reminders/${first.body.id}`)).status).toBe(200);
    const cancelled = await reminder(user, first.body.id);
    expect(cancelled.status).toBe('cancelled');
    expect((await ctx.call('DELETE', `/v1/users/${user}/reminders/${first.body.id}`)).status).toBe(409);
    expect((await ctx.call('GET', `/v1/users/${user}/reminders?status=cancelled`)).body.reminders).toHaveLength(1);
  });

  it('PATCH moves the due time through the validated update', async () => {
    const user = `${ctx.prefix}-patch`;
    const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: 'stretch', dueAt: inSeconds(3600) });
    const refused = await ctx.call('PATCH', `/v1/users/${user}/reminders/${created.body.id}`, { dueAt: inSeconds(-3600) });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('future');
    const moved = await ctx.call('PATCH', `/v1/users/${user}/reminders/${created.body.id}`, { dueAt: inSeconds(2) });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await poll(() => reminder(user, created.body.id), (r) => r.status === 'fired')).status).toBe('fired');
  });
});

describe('live events across processes', () => {
  it('a notification written through another connection pool (as a worker process would) reaches open pages via LISTEN/NOTIFY, and Last-Event-ID replays it', async () => {
    const user = `${ctx.prefix}-listen`;
    const client = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
    expect((await client.getSettings(user)).timezone).toBe('UTC');
    // Reads register nobody; the notifications below need the user to exist, as a write makes them.
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);
    const stream = await openSse(`${ctx.baseUrl}/v1/users/${user}/events`, TEST_KEY);
    await stream.next((e) => e.event === 'ready');
    const elsewhere = createPool(ctx.runtime.endpoints.databaseUrl, 1);
    try {
      const { notification } = await storeAndAnnounce({ unitOfWork: new PostgresUnitOfWork(elsewhere) }, { userId: ctx.userKey(user), kind: 'nudge', title: 'hi', body: '在吗？', idempotencyKey: 'x-1' }, new Date());
      const got = await stream.next((e) => e.event === 'notification' && e.data.id === notification.id, 10_000);
      expect(got.data.body).toBe('在吗？');
      // Once per idempotency key: the second store is neither stored nor announced.
      expect((await storeAndAnnounce({ unitOfWork: new PostgresUnitOfWork(elsewhere) }, { userId: ctx.userKey(user), kind: 'nudge', title: 'hi', body: '在吗？', idempotencyKey: 'x-1' }, new Date())).created).toBe(false);
      const resumed = await openSse(`${ctx.baseUrl}/v1/users/${user}/events`, TEST_KEY, { 'last-event-id': String(notification.seq - 1) });
      const replayed = await resumed.next((e) => e.event === 'notification');
      expect(replayed.data.id).toBe(notification.id);
      resumed.close();
      expect((await client.listNotifications(user, { kind: 'nudge' })).notifications).toHaveLength(1);
    } finally {
      stream.close();
      await elsewhere.end();
    }
    // Another tenant's key listens to its own user of that id, who hears nothing of this one.
    const foreign = await openSse(`${ctx.baseUrl}/v1/users/${user}/events`, OTHER_TENANT_KEY);
    await foreign.next((e) => e.event === 'ready');
    const probe = createPool(ctx.runtime.endpoints.databaseUrl, 1);
    try {
      await storeAndAnnounce({ unitOfWork: new PostgresUnitOfWork(probe) }, { userId: ctx.userKey(user), kind: 'nudge', title: 'hi', body: '还在吗？', idempotencyKey: 'x-2' }, new Date());
      await expect(foreign.next((e) => e.event === 'notification', 1_500)).rejects.toThrow();
    } finally {
      foreign.close();
      await probe.end();
    }
  });
});

describe('reminders from conversations', () => {
  it('"提醒我明天下午三点开会" in a message starts one ReminderWorkflow at 15:00 in the user’s zone, even when extraction re-runs', async () => {
    const user = `${ctx.prefix}-conv`;
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'Asia/Shanghai' })).status).toBe(200);
    const saidAt = '2026-12-01T10:00:00+08:00';
    const posted = await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, {
      messages: [
        { id: 'm1', role: 'user', content: '提醒我明天下午三点开会', at: saidAt },
        { id: 'm2', role: 'assistant', content: '好的，明天下午三点提醒你。', at: saidAt },
        { id: 'm3', role: 'user', content: 'remind me on Friday at 9 to call mom', at: saidAt },
      ],
    });
    expect(posted.status).toBe(202);
    expect((await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {})).status).toBe(200);
    const listed = (await ctx.call('GET', `/v1/users/${user}/reminders`)).body.reminders as { id: string; text: string; dueAt: string; source: Record<string, string>; workflowId: string; assumedTime: boolean }[];
    const meeting = listed.find((r) => r.text === '开会')!;
    const mom = listed.find((r) => r.text === 'call mom')!;
    expect(listed).toHaveLength(2);
    expect(DateTime.fromISO(meeting.dueAt, { zone: 'Asia/Shanghai' }).toFormat('yyyy-MM-dd HH:mm')).toBe('2026-12-02 15:00');
    expect(DateTime.fromISO(mom.dueAt, { zone: 'Asia/Shanghai' }).toFormat('yyyy-MM-dd HH:mm')).toBe('2026-12-04 09:00');
    expect(meeting.source).toMatchObject({ via: 'conversation', conversationId: 'c1', messageId: 'm1' });
    const handle = ctx.runtime.temporal.workflow.getHandle(meeting.workflowId);
    expect((await handle.describe()).status.name).toBe('RUNNING');

    // Extraction again (a new run of the same conversation): the same reminders, no second workflow.
    await ctx.runtime.temporal.workflow.execute(extractMemoriesWorkflow, { taskQueue: ctx.taskQueue, workflowId: `extract:${user}:c1:again`, args: [{ userId: ctx.userKey(user), conversationId: 'c1' }] });
    const again = (await ctx.call('GET', `/v1/users/${user}/reminders`)).body.reminders;
    expect(again).toHaveLength(2);
    const runs: string[] = [];
    for await (const w of ctx.runtime.temporal.workflow.list({ query: `WorkflowType = 'reminderWorkflow' AND MemoryUserId = '${ctx.userKey(user)}'` })) runs.push(w.workflowId);
    expect(runs.sort()).toEqual([meeting.workflowId, mom.workflowId].sort());
  });
});

describe('settings, digests and nudges', () => {
  it('settings drive the digest and nudge schedules; a bad timezone is refused', async () => {
    const user = `${ctx.prefix}-settings`;
    const initial = await ctx.call('GET', `/v1/users/${user}/settings`);
    expect(initial.body).toMatchObject({ timezone: 'UTC', digestTime: '22:00', proactive: { enabled: true } });
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'Nowhere/Land' })).body.error.code).toBe('validation_failed');
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { digestTime: '24:00' })).status).toBe(400);

    const put = await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'America/New_York', digestTime: '21:30', proactive: { probability: 0.5, maxPerDay: 1 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ timezone: 'America/New_York', digestTime: '21:30', proactive: { enabled: true, probability: 0.5, maxPerDay: 1, quietHours: { start: '22:00', end: '08:00' } } });
    const digest = await ctx.runtime.temporal.schedule.getHandle(digestScheduleId(ctx.userKey(user))).describe();
    expect(digest.spec.timezone).toBe('America/New_York');
    expect(digest.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 21, end: 21, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }] });
    for (const next of digest.info.nextActionTimes.slice(0, 3)) expect(DateTime.fromJSDate(next, { zone: 'America/New_York' }).toFormat('HH:mm')).toBe('21:30');

    // luxon accepts any case; the Schedule does not: stored as tzdata spells it, not 503 for good.
    const lower = await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'asia/shanghai' });
    expect(lower.status, JSON.stringify(lower.body)).toBe(200);
    expect(lower.body.timezone).toBe('Asia/Shanghai');
    expect((await ctx.runtime.temporal.schedule.getHandle(digestScheduleId(ctx.userKey(user))).describe()).spec.timezone).toBe('Asia/Shanghai');

    await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'Asia/Tokyo', proactive: { enabled: false } });
    const moved = await ctx.runtime.temporal.schedule.getHandle(digestScheduleId(ctx.userKey(user))).describe();
    expect(moved.spec.timezone).toBe('Asia/Tokyo');
    expect((await ctx.runtime.temporal.schedule.getHandle(nudgeScheduleId(ctx.userKey(user))).describe()).state.paused).toBe(true);
  });

  it('the digest spec keeps 22:00 local across a DST change on the real server', async () => {
    // The Java time-skipping server has no Schedules: the server's own next-action computation is
    // checked here instead, for a schedule starting just before New York's spring-forward (2027-03-14).
    const spec = digestCalendarSpec('22:00', 'America/New_York');
    const id = `dst-${ctx.prefix}`;
    const handle = await ctx.runtime.temporal.schedule.create({
      scheduleId: id,
      spec: { calendars: spec.calendars, timezone: spec.timezone, startAt: new Date('2027-03-12T12:00:00Z') },
      action: { type: 'startWorkflow', workflowType: digestWorkflow, args: [{ userId: 'nobody' }], taskQueue: 'nowhere' },
      state: { paused: true },
    });
    const times = (await handle.describe()).info.nextActionTimes.slice(0, 4).map((d) => DateTime.fromJSDate(d, { zone: 'America/New_York' }).toFormat('yyyy-MM-dd HH:mm ZZ'));
    await handle.delete();
    expect(times).toEqual(['2027-03-12 22:00 -05:00', '2027-03-13 22:00 -05:00', '2027-03-14 22:00 -04:00', '2027-03-15 22:00 -04:00']);
  });

  it('writes today’s digest (template without a model), lists it, and the schedule’s run pushes it', async () => {
    const user = `${ctx.prefix}-digest`;
    await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'Asia/Shanghai' });
    const now = new Date().toISOString();
    await ctx.call('POST', `/v1/users/${user}/conversations/d1/messages`, {
      messages: [
        { id: 'm1', role: 'user', content: '我对花生过敏，吃了会起疹子，这很重要。', at: now },
        { id: 'm2', role: 'user', content: 'payment-svc 为什么每天晚上都超时？', at: now },
        { id: 'm3', role: 'assistant', content: '这个我不确定，需要看一下日志。', at: now },
      ],
    });
    await ctx.call('POST', `/v1/users/${user}/conversations/d1/end?wait=true`, {});
    const written = await ctx.call('POST', `/v1/users/${user}/digests`);
    expect(written.status, JSON.stringify(written.body)).toBe(201);
    expect(written.body.generatedBy).toBe('template');
    expect(written.body.text).toContain('今日对话 / Conversations');
    expect(written.body.text).toContain('payment-svc 为什么每天晚上都超时');
    expect(written.body.sections.conversations).toMatchObject({ count: 1, messages: 3 });
    expect(written.body.sections.importantMemories.some((m: { text: string }) => m.text.includes('花生'))).toBe(true);
    expect(written.body.sections.openQuestions).toHaveLength(1);
    const listed = await ctx.call('GET', `/v1/users/${user}/digests?days=7`);
    expect(listed.body.digests.map((d: { date: string }) => d.date)).toEqual([DateTime.now().setZone('Asia/Shanghai').toISODate()]);
    expect((await ctx.call('GET', `/v1/users/${user}/notifications?kind=digest`)).body.notifications).toHaveLength(0);

    await ctx.runtime.temporal.schedule.getHandle(digestScheduleId(ctx.userKey(user))).trigger();
    const pushed = await poll(async () => (await ctx.call('GET', `/v1/users/${user}/notifications?kind=digest`)).body.notifications, (n: { title: string }[]) => n.length > 0);
    expect(pushed).toHaveLength(1);
    expect(pushed[0]!.title).toContain('今日摘要');
  });

  it('nudges: an upcoming reminder is mentioned like a person would; opt-out and probability 0 stop it', async () => {
    const user = `${ctx.prefix}-nudge`;
    const always = { enabled: true, probability: 1, maxPerDay: 5, quietHours: { start: '00:00', end: '00:00' } };
    await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'Asia/Shanghai', proactive: always });
    await ctx.call('POST', `/v1/users/${user}/reminders`, { text: '和老王开会', dueAt: inSeconds(40 * 60) });
    const run = () => ctx.runtime.temporal.workflow.execute(nudgeWorkflow, { taskQueue: ctx.taskQueue, workflowId: `nudge:${user}:${Math.random()}`, args: [{ userId: ctx.userKey(user) }] });

    const first = await run();
    expect(first.decision).toMatchObject({ send: true, trigger: { kind: 'reminder_upcoming' } });
    expect(first.delivered).toBe(true);
    const nudges = (await ctx.call('GET', `/v1/users/${user}/notifications?kind=nudge`)).body.notifications;
    expect(nudges).toHaveLength(1);
    expect(nudges[0].body).toContain('「和老王开会」');
    expect(nudges[0].body).toMatch(/分钟/u);
    // Said once today about the same thing.
    expect((await run()).delivered).toBe(false);

    await ctx.call('PUT', `/v1/users/${user}/settings`, { proactive: { probability: 0 } });
    expect((await run()).decision).toMatchObject({ send: false, reason: 'probability' });
    await ctx.call('PUT', `/v1/users/${user}/settings`, { proactive: { enabled: false, probability: 1 } });
    expect((await run()).decision).toEqual({ send: false, reason: 'opted-out' });
    expect((await ctx.call('GET', `/v1/users/${user}/notifications?kind=nudge`)).body.notifications).toHaveLength(1);
  });
});
