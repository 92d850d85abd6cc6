import { describe, expect, it } from 'vitest';
import { deferUntilQuietEnds, inQuietHours, quietHoursEnd } from '../../../src/core/proactive/nudge-policy';
import type { NudgeTrigger } from '../../../src/core/proactive/nudge-triggers';
import { DEFAULT_PROACTIVE, type ProactiveSettings } from '../../../src/core/proactive/settings';

const NIGHT = { start: '22:00', end: '08:00' };
const trigger: NudgeTrigger = { kind: 'goal_recalled', key: 'goal:1', subject: '年底前跑进 4 小时', memoryId: '1', priority: 150 };
const context = (p: Partial<ProactiveSettings> = {}, over: { sentToday?: number; triggers?: NudgeTrigger[] } = {}) => ({
  settings: { proactive: { ...DEFAULT_PROACTIVE, probability: 1, quietHours: NIGHT, ...p }, timezone: 'Asia/Shanghai' },
  sentToday: over.sentToday ?? 0,
  triggers: over.triggers ?? [trigger],
});

describe('the end of the quiet window', () => {
  it('wraps midnight: 23:00 ends at 08:00 the next day, 03:00 at 08:00 the same day (Shanghai)', () => {
    expect(quietHoursEnd(new Date('2026-06-10T15:00:00Z'), 'Asia/Shanghai', NIGHT)).toEqual(new Date('2026-06-11T00:00:00Z'));
    expect(quietHoursEnd(new Date('2026-06-10T19:00:00Z'), 'Asia/Shanghai', NIGHT)).toEqual(new Date('2026-06-11T00:00:00Z'));
    expect(quietHoursEnd(new Date('2026-06-10T23:59:59Z'), 'Asia/Shanghai', NIGHT)).toEqual(new Date('2026-06-11T00:00:00Z'));
  });

  it('a window within one day ends the same day; outside the window or with an empty window there is no end', () => {
    expect(quietHoursEnd(new Date('2026-06-10T05:30:00Z'), 'Asia/Shanghai', { start: '13:00', end: '14:15' })).toEqual(new Date('2026-06-10T06:15:00Z'));
    expect(quietHoursEnd(new Date('2026-06-10T04:00:00Z'), 'Asia/Shanghai', NIGHT)).toBeUndefined(); // 12:00
    expect(quietHoursEnd(new Date('2026-06-10T00:00:00Z'), 'Asia/Shanghai', NIGHT)).toBeUndefined(); // 08:00 sharp: over
    expect(quietHoursEnd(new Date('2026-06-10T15:00:00Z'), 'Asia/Shanghai', { start: '09:00', end: '09:00' })).toBeUndefined();
  });

  it('keeps the wall clock across DST: New York falls back and springs forward in the night', () => {
    // 2026-11-01 02:00 EDT → 01:00 EST: 23:00 EDT on Oct 31 ends at 08:00 EST (13:00Z), 10 h later, not 9.
    expect(quietHoursEnd(new Date('2026-11-01T03:00:00Z'), 'America/New_York', NIGHT)).toEqual(new Date('2026-11-01T13:00:00Z'));
    // 2026-03-08 02:00 EST → 03:00 EDT: 23:00 EST on Mar 7 ends at 08:00 EDT (12:00Z), 8 h later.
    expect(quietHoursEnd(new Date('2026-03-08T04:00:00Z'), 'America/New_York', NIGHT)).toEqual(new Date('2026-03-08T12:00:00Z'));
    // An end inside the skipped hour (02:30 does not exist on Mar 8) is the first instant after the gap, out of the window.
    const gap = quietHoursEnd(new Date('2026-03-08T05:00:00Z'), 'America/New_York', { start: '23:00', end: '02:30' })!;
    expect(gap.getTime()).toBeGreaterThan(new Date('2026-03-08T05:00:00Z').getTime());
    expect(gap.getTime()).toBeLessThanOrEqual(new Date('2026-03-08T07:30:00Z').getTime());
    expect(inQuietHours(gap, 'America/New_York', { start: '23:00', end: '02:30' })).toBe(false);
  });

  it('ends after it starts, out of the window, a minute after its last quiet minute (7 h 15 min steps through a year, three zones)', () => {
    for (const zone of ['Asia/Shanghai', 'America/New_York', 'Europe/London']) {
      for (let t = Date.parse('2026-01-01T00:00:00Z'); t < Date.parse('2027-01-01T00:00:00Z'); t += 7 * 3_600_000 + 15 * 60_000) {
        const at = new Date(t);
        const end = quietHoursEnd(at, zone, NIGHT);
        if (!inQuietHours(at, zone, NIGHT)) continue;
        expect(end!.getTime()).toBeGreaterThan(t);
        expect(end!.getTime() - t).toBeLessThanOrEqual(11 * 3_600_000);
        expect(inQuietHours(end!, zone, NIGHT)).toBe(false);
        expect(inQuietHours(new Date(end!.getTime() - 60_000), zone, NIGHT)).toBe(true);
      }
    }
  });
});

describe('which refused nudge waits for the morning', () => {
  const at23 = new Date('2026-06-10T15:00:00Z'); // 23:00 in Shanghai
  it('the one refused only by quiet hours, until the window ends', () => {
    expect(deferUntilQuietEnds(context(), at23, 0.2)).toEqual(new Date('2026-06-11T00:00:00Z'));
  });
  it('not one that would be refused anyway: opted out, capped today, nothing to say, the draw above the probability', () => {
    expect(deferUntilQuietEnds(context({ enabled: false }), at23, 0.2)).toBeUndefined();
    expect(deferUntilQuietEnds(context({ maxPerDay: 2 }, { sentToday: 2 }), at23, 0.2)).toBeUndefined();
    expect(deferUntilQuietEnds(context({}, { triggers: [] }), at23, 0.2)).toBeUndefined();
    expect(deferUntilQuietEnds(context({ probability: 0.1 }), at23, 0.2)).toBeUndefined();
  });
  it('not one outside quiet hours (sent or refused for another reason now)', () => {
    expect(deferUntilQuietEnds(context(), new Date('2026-06-10T04:00:00Z'), 0.2)).toBeUndefined();
  });
});
