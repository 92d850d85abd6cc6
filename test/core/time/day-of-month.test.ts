import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { parseQueryDates } from '../../../src/core/time/query-dates';
import { pastDayOfMonth } from '../../../src/core/time/query-date-spans';

/**
 * A day of month, alone or with a weekday ("Thursday the 5th", "周四5号", "5号"): the most recent
 * date on or before today with that day of month. Cases written from the calendar, before any
 * eval data was read: 2026-03-01 is a Sunday, 2026-12-31 a Thursday.
 */

const UTC = 'UTC';

function days(query: string, now: string, zone = UTC): string[] {
  return parseQueryDates(query, { now: DateTime.fromISO(now, { zone }).toJSDate(), timeZone: zone }).map(
    (r) => `${DateTime.fromJSDate(r.start, { zone }).toISODate()}/${r.granularity}`,
  );
}

const TUE_MAR_10 = '2026-03-10T15:00';
const MON_MAR_2 = '2026-03-02T09:00';
const FRI_JAN_1 = '2027-01-01T09:00';
const SUN_JAN_3 = '2027-01-03T09:00';

describe('a weekday with a day of month', () => {
  it('is that date when the two agree, not the last such weekday', () => {
    expect(days('what did I do on Thursday the 5th?', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('Sunday the 8th', TUE_MAR_10)).toEqual(['2026-03-08/day']);
    expect(days('Thursday 5th', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('on Thursday, the 5th', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('周四5号我们聊了什么', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('星期天8号', TUE_MAR_10)).toEqual(['2026-03-08/day']);
    expect(days('5号周四那天', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('周日（8号）', TUE_MAR_10)).toEqual(['2026-03-08/day']);
  });

  it('goes back to the previous month when this month has not reached the day', () => {
    expect(days('Thursday the 12th', TUE_MAR_10)).toEqual(['2026-02-12/day']);
    expect(days('Saturday the 28th', MON_MAR_2)).toEqual(['2026-02-28/day']);
    // February has no 30th: the January one.
    expect(days('Friday the 30th', MON_MAR_2)).toEqual(['2026-01-30/day']);
    expect(days('周六31号', MON_MAR_2)).toEqual(['2026-01-31/day']);
  });

  it('crosses the year boundary', () => {
    expect(days('Thursday the 31st', FRI_JAN_1)).toEqual(['2026-12-31/day']);
    expect(days('周四31日', FRI_JAN_1)).toEqual(['2026-12-31/day']);
    expect(days('Saturday the 5th', SUN_JAN_3)).toEqual(['2026-12-05/day']);
  });

  it('prefers the day of month when the weekday disagrees', () => {
    // 2026-03-05 is a Thursday; the last Friday the 5th was in December 2025.
    expect(days('Friday the 5th', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('周五5号', TUE_MAR_10)).toEqual(['2026-03-05/day']);
  });

  it('with a month named, is that month-day, as one range', () => {
    expect(days('Thursday the 5th of March', '2026-06-11T09:00')).toEqual(['2026-03-05/day']);
    expect(days('Thursday, March 5th', '2026-06-11T09:00')).toEqual(['2026-03-05/day']);
    expect(days('3月5号周四', '2026-06-11T09:00')).toEqual(['2026-03-05/day']);
    expect(days('周四3月5号', '2026-06-11T09:00')).toEqual(['2026-03-05/day']);
  });

  it('in the user zone', () => {
    // 2026-03-09 20:00 in New York is already 03-10 in Shanghai; the 10th is today only there.
    expect(days('on the 10th', '2026-03-09T20:00', 'America/New_York')).toEqual(['2026-02-10/day']);
    expect(days('10号', '2026-03-10T09:00', 'Asia/Shanghai')).toEqual(['2026-03-10/day']);
  });
});

describe('a day of month alone', () => {
  it('"on the 5th" / "5号" / "五号" is the most recent such date', () => {
    expect(days('what did we talk about on the 5th?', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('on the 10th', TUE_MAR_10)).toEqual(['2026-03-10/day']);
    expect(days('5号那天我们聊了什么', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('五号那天', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('on the 5th', SUN_JAN_3)).toEqual(['2026-12-05/day']);
  });

  it('leaves numbered things alone', () => {
    expect(days('5号线地铁很挤', TUE_MAR_10)).toEqual([]);
    expect(days('住在3号楼', TUE_MAR_10)).toEqual([]);
    expect(days('买了五号电池', TUE_MAR_10)).toEqual([]);
    expect(days('8号选手', TUE_MAR_10)).toEqual([]);
    expect(days('on the 5th floor', TUE_MAR_10)).toEqual([]);
    expect(days('for the 5th time', TUE_MAR_10)).toEqual([]);
    expect(days('my 5th birthday', TUE_MAR_10)).toEqual([]);
    expect(days('第5号', TUE_MAR_10)).toEqual([]);
    expect(days('40号', TUE_MAR_10)).toEqual([]);
  });

  it('keeps the readings that already had a month', () => {
    expect(days('3月5号', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('上个月5号', TUE_MAR_10)).toEqual(['2026-02-05/day']);
    expect(days('the 5th of May', TUE_MAR_10)).toEqual(['2025-05-05/day']);
    expect(days('last Thursday', TUE_MAR_10)).toEqual(['2026-03-05/day']);
    expect(days('Thursday at 5pm', TUE_MAR_10)).toEqual(['2026-03-05/day']);
  });
});

describe('pastDayOfMonth', () => {
  const at = (iso: string) => DateTime.fromISO(iso, { zone: UTC }).startOf('day');
  it('skips months without the day and accepts today', () => {
    expect(pastDayOfMonth(at('2026-03-31'), 31)?.toISODate()).toBe('2026-03-31');
    expect(pastDayOfMonth(at('2026-04-30'), 31)?.toISODate()).toBe('2026-03-31');
    expect(pastDayOfMonth(at('2026-03-01'), 29)?.toISODate()).toBe('2026-01-29');
    expect(pastDayOfMonth(at('2028-03-01'), 29)?.toISODate()).toBe('2028-02-29');
  });
  it('rejects days no month has', () => {
    expect(pastDayOfMonth(at('2026-03-10'), 0)).toBeUndefined();
    expect(pastDayOfMonth(at('2026-03-10'), 32)).toBeUndefined();
  });
});
