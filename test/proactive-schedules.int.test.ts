import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestScheduleId, nudgeScheduleId } from '../src/proactive/proactive-schedules';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// A user gets their daily digest and nudge schedules with their first message, without ever
// touching their settings (PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE, on by default; the other test
// files turn it off so that timed schedules cannot fire into their users mid-run).

let on: TestContext;
let off: TestContext;
const made: string[] = [];

beforeAll(async () => {
  [on, off] = await Promise.all([createTestContext({ PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE: 'true' }), createTestContext()]);
});
afterAll(async () => {
  for (const id of made) await on?.runtime.temporal.schedule.getHandle(id).delete().catch(() => {});
  await Promise.all([on?.close(), off?.close()]);
});

const describeSchedule = (ctx: TestContext, id: string) => ctx.runtime.temporal.schedule.getHandle(id).describe().catch(() => undefined);

describe('proactive schedules for every active user', () => {
  it('a first message sets up the digest (22:00 in the user’s zone) and the nudges, without a settings change', async () => {
    const user = `${on.prefix}-first`;
    made.push(digestScheduleId(on.userKey(user)), nudgeScheduleId(on.userKey(user)));
    const res = await on.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: '今天好累，论文还没写完' });
    expect(res.status).toBe(202);
    const digest = await poll(() => describeSchedule(on, digestScheduleId(on.userKey(user))), (d) => d !== undefined);
    expect(digest?.spec.timezone).toBe('UTC');
    expect(digest?.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 22, end: 22, step: 1 }], minute: [{ start: 0, end: 0, step: 1 }] });
    expect(digest?.action).toMatchObject({ type: 'startWorkflow', workflowType: 'digestWorkflow', taskQueue: on.taskQueue });
    const nudge = await describeSchedule(on, nudgeScheduleId(on.userKey(user)));
    expect(nudge?.state.paused).toBe(false);

    // A later change of settings moves the same schedule; it is not created twice.
    expect((await on.call('PUT', `/v1/users/${user}/settings`, { timezone: 'Asia/Shanghai', proactive: { enabled: false } })).status).toBe(200);
    expect((await describeSchedule(on, digestScheduleId(on.userKey(user))))?.spec.timezone).toBe('Asia/Shanghai');
    expect((await describeSchedule(on, nudgeScheduleId(on.userKey(user))))?.state.paused).toBe(true);
  });

  it('with the option off, messages alone create no schedules', async () => {
    const user = `${off.prefix}-quiet`;
    expect((await off.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: 'hello there' })).status).toBe(202);
    // Give a background setup the time it took above to show up, if it (wrongly) ran.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await describeSchedule(off, digestScheduleId(off.userKey(user)))).toBeUndefined();
  });
});
