import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { digestCalendarSpec, digestDay, nextDigestTimes } from '../../../src/core/proactive/digest-schedule';

const local = (d: Date, zone: string) => DateTime.fromJSDate(d, { zone }).toFormat("yyyy-MM-dd HH:mm ZZ");

describe('daily digest timing', () => {
  it('stays at 22:00 local across the spring-forward change (America/New_York, 8 March 2026)', () => {
    const times = nextDigestTimes(new Date('2026-03-06T12:00:00Z'), 'America/New_York', '22:00', 4);
    expect(times.map((d) => local(d, 'America/New_York'))).toEqual([
      '2026-03-06 22:00 -05:00',
      '2026-03-07 22:00 -05:00',
      '2026-03-08 22:00 -04:00',
      '2026-03-09 22:00 -04:00',
    ]);
    // The UTC instant moves by an hour: that is what a fixed-UTC cron would get wrong.
    expect(times[1]!.toISOString()).toBe('2026-03-08T03:00:00.000Z');
    expect(times[2]!.toISOString()).toBe('2026-03-09T02:00:00.000Z');
  });

  it('stays at 22:00 local across the autumn change (Europe/Berlin, 25 October 2026)', () => {
    const times = nextDigestTimes(new Date('2026-10-24T00:00:00Z'), 'Europe/Berlin', '22:00', 3);
    expect(times.map((d) => local(d, 'Europe/Berlin'))).toEqual(['2026-10-24 22:00 +02:00', '2026-10-25 22:00 +01:00', '2026-10-26 22:00 +01:00']);
  });

  it('a digest time inside the spring gap runs once that day, at the shifted time', () => {
    const times = nextDigestTimes(new Date('2026-03-07T12:00:00Z'), 'America/New_York', '02:30', 2);
    expect(times.map((d) => local(d, 'America/New_York'))).toEqual(['2026-03-08 03:30 -04:00', '2026-03-09 02:30 -04:00']);
  });

  it('is strictly after the reference instant', () => {
    const at = new Date('2026-06-01T14:00:00Z'); // 22:00 in Shanghai exactly
    expect(local(nextDigestTimes(at, 'Asia/Shanghai', '22:00')[0]!, 'Asia/Shanghai')).toBe('2026-06-02 22:00 +08:00');
  });

  it('builds the Temporal calendar spec with the user zone, and the local day a run covers', () => {
    expect(digestCalendarSpec('07:45', 'Asia/Tokyo')).toEqual({ calendars: [{ hour: 7, minute: 45, comment: 'daily digest at 07:45 Asia/Tokyo' }], timezone: 'Asia/Tokyo' });
    expect(() => digestCalendarSpec('25:00', 'UTC')).toThrow(RangeError);
    const day = digestDay(new Date('2026-06-01T15:30:00Z'), 'Asia/Shanghai');
    expect(day).toEqual({ date: '2026-06-01', start: new Date('2026-05-31T16:00:00Z'), end: new Date('2026-06-01T16:00:00Z') });
  });
});
