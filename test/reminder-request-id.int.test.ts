import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';

// A reminder requestId names one request: sent again with the same body (however the same instant
// and zone are spelled) it is the same reminder; with another body it is refused with 422
// request_id_reused and nothing changes, also when the two bodies race.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const path = (user: string) => `/v1/users/${user}/reminders`;

async function reminders(user: string): Promise<{ id: string; text: string; dueAt: string; timezone: string; version: number }[]> {
  return (await ctx.call('GET', path(user))).body.reminders;
}

describe('reminder requestId', () => {
  it('the same body, spelled differently, is the same reminder; another text, dueAt, timezone or rrule is 422 and changes nothing', async () => {
    const user = `${ctx.prefix}-reuse`;
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);
    const body = { text: 'Call mom', dueAt: '2030-06-01T15:00', timezone: 'asia/shanghai', requestId: 'r1' };
    const first = await ctx.call('POST', path(user), body);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    // The zone is stored as tzdata spells it, and the wall-clock time is read in it.
    expect(first.body).toMatchObject({ timezone: 'Asia/Shanghai', dueAt: '2030-06-01T07:00:00.000Z', source: { via: 'api', requestId: 'r1' } });

    for (const same of [
      body,
      { ...body, timezone: 'Asia/Shanghai' },
      { ...body, dueAt: '2030-06-01T07:00:00Z' },
      { ...body, dueAt: '2030-06-01T15:00:00.000+08:00' },
      // Without a zone: the zone the reminder was created in.
      { text: 'Call mom', dueAt: '2030-06-01T15:00', requestId: 'r1' },
    ]) {
      const again = await ctx.call('POST', path(user), same);
      expect(again.status, `${JSON.stringify(same)} → ${JSON.stringify(again.body)}`).toBe(200);
      expect(again.body).toEqual(first.body);
    }

    for (const [field, other] of [
      ['text', { ...body, text: 'Call dad' }],
      ['dueAt', { ...body, dueAt: '2030-06-01T16:00' }],
      ['timezone', { ...body, timezone: 'Europe/Paris' }],
      ['timezone', { ...body, timezone: 'Not/AZone' }],
      ['rrule', { ...body, rrule: 'FREQ=DAILY' }],
    ] as const) {
      const refused = await ctx.call('POST', path(user), other);
      expect(refused.status, `${field}: ${JSON.stringify(refused.body)}`).toBe(422);
      expect(refused.body.error).toMatchObject({ code: 'request_id_reused', details: { requestId: 'r1', field, id: first.body.id } });
    }
    const after = await reminders(user);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: first.body.id, text: 'Call mom', dueAt: first.body.dueAt, timezone: 'Asia/Shanghai', version: first.body.version });
  });

  it('a recurring reminder retried after its first occurrence moved on, and a one-off after a reschedule, are still the same request', async () => {
    const user = `${ctx.prefix}-moved`;
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);
    // A series that started in the past: the first occurrence is the next one, not the dueAt sent.
    const series = { text: 'stand-up', dueAt: '2020-01-06T09:00', timezone: 'Europe/Berlin', rrule: 'FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0', requestId: 's1' };
    const created = await ctx.call('POST', path(user), series);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(new Date(created.body.dueAt).getTime()).toBeGreaterThan(Date.now());
    expect((await ctx.call('POST', path(user), series)).status).toBe(200);
    expect((await ctx.call('POST', path(user), { ...series, dueAt: '2020-01-13T09:00' })).status).toBe(422);

    const once = { text: 'dentist', dueAt: new Date(Date.now() + 3_600_000).toISOString(), requestId: 'o1' };
    const booked = await ctx.call('POST', path(user), once);
    expect(booked.status).toBe(201);
    const moved = await ctx.call('PATCH', `${path(user)}/${booked.body.id}`, { dueAt: new Date(Date.now() + 7_200_000).toISOString() });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const retried = await ctx.call('POST', path(user), once);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.id).toBe(booked.body.id);
    expect(retried.body.dueAt).toBe(moved.body.dueAt);
  });

  it('two bodies racing under one requestId: one reminder, one 422', async () => {
    const user = `${ctx.prefix}-race`;
    expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC' })).status).toBe(200);
    const due = new Date(Date.now() + 3_600_000).toISOString();
    for (let i = 0; i < 6; i++) {
      const requestId = `race-${i}`;
      const answers = await Promise.all([
        ctx.call('POST', path(user), { text: `water the plants ${i}`, dueAt: due, requestId }),
        ctx.call('POST', path(user), { text: `feed the cat ${i}`, dueAt: due, requestId }),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual([201, 422]);
      const won = answers.find((a) => a.status === 201)!;
      const mine = (await reminders(user)).filter((r) => r.id === won.body.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]?.text).toBe(won.body.text);
    }
    expect(await reminders(user)).toHaveLength(6);
  });
});
