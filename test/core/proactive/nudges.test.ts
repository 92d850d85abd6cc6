import { describe, expect, it } from 'vitest';
import { decideNudge, inQuietHours } from '../../../src/core/proactive/nudge-policy';
import { findNudgeTriggers, goalDeadline, type NudgeTrigger } from '../../../src/core/proactive/nudge-triggers';
import { composeNudge, quoteSubject } from '../../../src/core/proactive/nudge-wording';
import { DEFAULT_PROACTIVE, type ProactiveSettings } from '../../../src/core/proactive/settings';
import { mulberry32 } from '../../support/prng';

const NOON_SH = new Date('2026-06-10T04:00:00Z'); // 12:00 in Shanghai
const trigger: NudgeTrigger = { kind: 'pain_point_recurring', key: 'pain:1', subject: '最困扰我的是 payment-svc 每天晚上超时', memoryId: '1', priority: 103 };
const settings = (p: Partial<ProactiveSettings> = {}): ProactiveSettings => ({ ...DEFAULT_PROACTIVE, ...p });

describe('nudge policy', () => {
  it('quiet hours wrap midnight and are read in the user’s zone', () => {
    const q = { start: '22:00', end: '08:00' };
    expect(inQuietHours(new Date('2026-06-10T15:30:00Z'), 'Asia/Shanghai', q)).toBe(true); // 23:30
    expect(inQuietHours(new Date('2026-06-09T23:59:00Z'), 'Asia/Shanghai', q)).toBe(true); // 07:59
    expect(inQuietHours(new Date('2026-06-10T00:00:00Z'), 'Asia/Shanghai', q)).toBe(false); // 08:00
    expect(inQuietHours(NOON_SH, 'Asia/Shanghai', { start: '12:00', end: '13:00' })).toBe(true);
    expect(inQuietHours(NOON_SH, 'Asia/Shanghai', { start: '09:00', end: '09:00' })).toBe(false);
  });

  it('opt-out, quiet hours and the daily cap win before any draw', () => {
    const base = { timeZone: 'Asia/Shanghai', now: NOON_SH, sentToday: 0, triggers: [trigger], draw: 0 };
    expect(decideNudge({ ...base, settings: settings({ enabled: false, probability: 1 }) })).toEqual({ send: false, reason: 'opted-out' });
    expect(decideNudge({ ...base, settings: settings({ probability: 1, quietHours: { start: '11:00', end: '14:00' } }) })).toEqual({ send: false, reason: 'quiet-hours' });
    expect(decideNudge({ ...base, sentToday: 2, settings: settings({ probability: 1, maxPerDay: 2 }) })).toEqual({ send: false, reason: 'daily-cap' });
    expect(decideNudge({ ...base, triggers: [], settings: settings({ probability: 1 }) })).toEqual({ send: false, reason: 'no-trigger' });
    expect(decideNudge({ ...base, settings: settings({ probability: 1 }) })).toMatchObject({ send: true, trigger });
    expect(decideNudge({ ...base, draw: 0.5, settings: settings({ probability: 0.4 }) })).toMatchObject({ send: false, reason: 'probability' });
  });

  it.each([0, 0.1, 0.3, 0.75, 1])('over many draws the nudge rate matches probability %s', (probability) => {
    const random = mulberry32(Math.round(probability * 1000) + 7);
    const N = 20_000;
    let sent = 0;
    for (let i = 0; i < N; i++) {
      const d = decideNudge({ settings: settings({ probability }), timeZone: 'Asia/Shanghai', now: NOON_SH, sentToday: 0, triggers: [trigger], draw: random() });
      if (d.send) sent++;
    }
    // 4 standard deviations of a binomial proportion: fails only if the policy is biased.
    const tolerance = 4 * Math.sqrt((probability * (1 - probability)) / N) + 1e-9;
    expect(Math.abs(sent / N - probability)).toBeLessThanOrEqual(tolerance);
  });

  it('opt-out stops nudges whatever the draws', () => {
    const random = mulberry32(42);
    for (let i = 0; i < 1000; i++) {
      expect(decideNudge({ settings: settings({ enabled: false, probability: 1 }), timeZone: 'UTC', now: NOON_SH, sentToday: 0, triggers: [trigger], draw: random() }).send).toBe(false);
    }
  });
});

describe('nudge triggers', () => {
  const now = new Date('2026-12-26T02:00:00Z'); // 10:00 in Shanghai, 26 Dec
  it('reads goal deadlines forward from when the goal was stated', () => {
    const stated = new Date('2026-06-28T02:00:00Z');
    expect(goalDeadline('我的目标是年底前把 P99 降到 50ms 以下', stated, 'Asia/Shanghai')!.toISOString()).toBe('2026-12-31T15:59:59.999Z');
    expect(goalDeadline('My goal is to finish the thesis by December 15', stated, 'Asia/Shanghai')!.toISOString()).toBe('2026-12-15T15:59:59.999Z');
    expect(goalDeadline('I want to ship it by the end of the month', stated, 'UTC')!.toISOString()).toBe('2026-06-30T23:59:59.999Z');
    expect(goalDeadline('我想学会游泳', stated, 'Asia/Shanghai')).toBeUndefined();
  });

  it('finds upcoming reminders, near goal deadlines and recurring pain points, most pressing first', () => {
    const triggers = findNudgeTriggers({
      now,
      timeZone: 'Asia/Shanghai',
      reminders: [
        { id: 'r1', text: '开会', dueAt: new Date(now.getTime() + 45 * 60_000) },
        { id: 'r2', text: 'far away', dueAt: new Date(now.getTime() + 5 * 3600_000) },
      ],
      memories: [
        { id: 'g1', text: '我的目标是年底前把 P99 降到 50ms 以下', type: 'goal', frequencyCount: 1, createdAt: new Date('2026-06-28T02:00:00Z'), updatedAt: new Date('2026-06-28T02:00:00Z') },
        { id: 'g2', text: '我想学会游泳', type: 'goal', frequencyCount: 1, createdAt: new Date('2026-06-28T02:00:00Z'), updatedAt: now },
        { id: 'p1', text: '最困扰我的是每天晚上超时', type: 'pain_point', frequencyCount: 4, createdAt: new Date('2026-12-01T00:00:00Z'), updatedAt: new Date('2026-12-24T00:00:00Z') },
        { id: 'p2', text: '偶尔头疼', type: 'pain_point', frequencyCount: 1, createdAt: now, updatedAt: now },
        { id: 'p3', text: 'old pain', type: 'pain_point', frequencyCount: 9, createdAt: new Date('2026-01-01T00:00:00Z'), updatedAt: new Date('2026-02-01T00:00:00Z') },
      ],
    });
    expect(triggers.map((t) => [t.kind, t.key])).toEqual([
      ['reminder_upcoming', 'reminder:r1'],
      ['goal_deadline', 'goal:g1'],
      ['pain_point_recurring', 'pain:p1'],
    ]);
    expect(triggers[0]!.minutesLeft).toBe(45);
    expect(triggers[1]!.daysLeft).toBe(6);
  });
});

describe('nudge wording', () => {
  it('reads like a person, in the language of the subject', () => {
    const zh = composeNudge(trigger, 0);
    expect(zh.lang).toBe('zh');
    expect(zh.body).toContain('「payment-svc 每天晚上超时」');
    expect(zh.body).not.toContain('最困扰我的是');
    expect(zh.body).toMatch(/[？?]$/u);
    const en = composeNudge({ kind: 'goal_deadline', key: 'goal:1', subject: 'My goal is to finish the thesis by December 15.', daysLeft: 3, priority: 1 }, 0.99);
    expect(en.lang).toBe('en');
    expect(en.body).toContain('"finish the thesis by December 15"');
    expect(en.body).toContain('3 days');
    expect(composeNudge({ kind: 'reminder_upcoming', key: 'r', subject: '开会', minutesLeft: 90, priority: 1 }, 0).body).toContain('1 小时 30 分钟');
  });

  it('varies the phrasing with the draw and keeps quotes short', () => {
    const bodies = new Set([0, 0.4, 0.8].map((d) => composeNudge(trigger, d).body));
    expect(bodies.size).toBe(3);
    expect([...quoteSubject('一'.repeat(100))]).toHaveLength(36);
  });
});
