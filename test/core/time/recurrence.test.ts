import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { nextOccurrence, validateRrule } from '../../../src/core/time/recurrence';

const BERLIN = 'Europe/Berlin';
const NY = 'America/New_York';
const SH = 'Asia/Shanghai';

/** Follows a rule from `start`, returning the next `n` occurrences as ISO strings. */
function series(rule: string, start: Date, zone: string, n: number): string[] {
  const out: string[] = [];
  let after = start;
  for (let i = 0; i < n; i += 1) {
    const next = nextOccurrence(rule, after, zone);
    if (!next) break;
    out.push(next.toISOString());
    after = next;
  }
  return out;
}

function localTimes(isoInstants: string[], zone: string): string[] {
  return isoInstants.map((iso) => DateTime.fromISO(iso, { zone }).toFormat('yyyy-MM-dd HH:mm'));
}

describe('nextOccurrence', () => {
  it('a daily 08:00 rule stays at 08:00 local across the Berlin spring-forward (last Sunday of March)', () => {
    const got = series('FREQ=DAILY;BYHOUR=8;BYMINUTE=0', new Date('2026-03-27T12:00:00Z'), BERLIN, 3);
    expect(got).toEqual([
      '2026-03-28T07:00:00.000Z', // 08:00 CET (UTC+1)
      '2026-03-29T06:00:00.000Z', // 08:00 CEST (UTC+2), the switch day
      '2026-03-30T06:00:00.000Z',
    ]);
    expect(localTimes(got, BERLIN)).toEqual(['2026-03-28 08:00', '2026-03-29 08:00', '2026-03-30 08:00']);
  });

  it('a daily 08:00 rule stays at 08:00 local across the Berlin fall-back (last Sunday of October)', () => {
    const got = series('FREQ=DAILY;BYHOUR=8;BYMINUTE=0', new Date('2026-10-23T12:00:00Z'), BERLIN, 3);
    expect(got).toEqual(['2026-10-24T06:00:00.000Z', '2026-10-25T07:00:00.000Z', '2026-10-26T07:00:00.000Z']);
    expect(localTimes(got, BERLIN)).toEqual(['2026-10-24 08:00', '2026-10-25 08:00', '2026-10-26 08:00']);
  });

  it('a weekly Monday 09:00 rule in New York crosses the March switch at 09:00 local', () => {
    const got = series('FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0', new Date('2026-03-01T12:00:00Z'), NY, 2);
    expect(got).toEqual(['2026-03-02T14:00:00.000Z', '2026-03-09T13:00:00.000Z']); // EST then EDT
  });

  it('is strictly after `after`', () => {
    const at8 = new Date('2026-06-12T00:00:00Z'); // 08:00 Shanghai
    expect(nextOccurrence('FREQ=DAILY;BYHOUR=8;BYMINUTE=0', at8, SH)?.toISOString()).toBe('2026-06-13T00:00:00.000Z');
    const justBefore = new Date(at8.getTime() - 1000);
    expect(nextOccurrence('FREQ=DAILY;BYHOUR=8;BYMINUTE=0', justBefore, SH)?.toISOString()).toBe(at8.toISOString());
  });

  it('uses the local date of the zone, not UTC', () => {
    // 2026-06-10T20:00Z is already Thursday 04:00 in Shanghai: the next 08:00 is the same local morning.
    expect(nextOccurrence('FREQ=DAILY;BYHOUR=8;BYMINUTE=0', new Date('2026-06-10T20:00:00Z'), SH)?.toISOString()).toBe(
      '2026-06-11T00:00:00.000Z',
    );
  });

  it('a wall time inside the spring gap fires at the shifted time that day', () => {
    const got = nextOccurrence('FREQ=DAILY;BYHOUR=2;BYMINUTE=30', new Date('2026-03-28T12:00:00Z'), BERLIN);
    expect(got?.toISOString()).toBe('2026-03-29T01:30:00.000Z'); // 03:30 CEST
  });

  it('a wall time that occurs twice in autumn fires once', () => {
    const first = nextOccurrence('FREQ=DAILY;BYHOUR=2;BYMINUTE=30', new Date('2026-10-24T12:00:00Z'), BERLIN);
    expect(first?.toISOString()).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST, the first instance
    const second = nextOccurrence('FREQ=DAILY;BYHOUR=2;BYMINUTE=30', first ?? new Date(0), BERLIN);
    expect(second?.toISOString()).toBe('2026-10-26T01:30:00.000Z'); // next day 02:30 CET, not 02:30 CET the same night
    // Asked during the repeated hour after the first 02:30 has passed: still not the same night.
    expect(nextOccurrence('FREQ=DAILY;BYHOUR=2;BYMINUTE=30', new Date('2026-10-25T01:15:00Z'), BERLIN)?.toISOString()).toBe(
      '2026-10-26T01:30:00.000Z',
    );
  });

  it('monthly on the 31st skips short months', () => {
    const got = series('FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0', new Date('2026-03-31T12:00:00Z'), SH, 2);
    expect(localTimes(got, SH)).toEqual(['2026-05-31 09:00', '2026-07-31 09:00']);
  });

  it('accepts the RRULE: prefix', () => {
    expect(nextOccurrence('RRULE:FREQ=DAILY;BYHOUR=8;BYMINUTE=0', new Date('2026-06-11T02:00:00Z'), SH)?.toISOString()).toBe(
      '2026-06-12T00:00:00.000Z',
    );
  });

  it('respects COUNT from a given series start', () => {
    const dtstart = new Date('2026-06-01T00:00:00Z'); // 08:00 Shanghai
    const rule = 'FREQ=DAILY;COUNT=3;BYHOUR=8;BYMINUTE=0';
    expect(nextOccurrence(rule, new Date('2026-06-02T02:00:00Z'), SH, { dtstart })?.toISOString()).toBe('2026-06-03T00:00:00.000Z');
    expect(nextOccurrence(rule, new Date('2026-06-03T02:00:00Z'), SH, { dtstart })).toBeUndefined();
  });

  it('respects a UTC UNTIL', () => {
    const rule = 'FREQ=DAILY;BYHOUR=8;BYMINUTE=0;UNTIL=20260331T235959Z';
    expect(nextOccurrence(rule, new Date('2026-03-30T10:00:00Z'), BERLIN)?.toISOString()).toBe('2026-03-31T06:00:00.000Z');
    expect(nextOccurrence(rule, new Date('2026-03-31T10:00:00Z'), BERLIN)).toBeUndefined();
  });

  it('keeps the INTERVAL phase of a DTSTART in the string', () => {
    const rule = 'DTSTART;TZID=Europe/Berlin:20260105T080000\nRRULE:FREQ=WEEKLY;INTERVAL=2';
    // Every other Monday from 2026-01-05: 01-05, 01-19, 02-02 … (08:00 CET = 07:00Z).
    expect(nextOccurrence(rule, new Date('2026-01-06T00:00:00Z'), BERLIN)?.toISOString()).toBe('2026-01-19T07:00:00.000Z');
    expect(nextOccurrence(rule, new Date('2026-01-20T00:00:00Z'), BERLIN)?.toISOString()).toBe('2026-02-02T07:00:00.000Z');
  });

  it('throws on an invalid zone or rule', () => {
    expect(() => nextOccurrence('FREQ=DAILY', new Date(), 'Not/AZone')).toThrow(RangeError);
    expect(() => nextOccurrence('FREQ=DAYLY', new Date('2026-01-01T00:00:00Z'), SH)).toThrow();
    expect(() => nextOccurrence('FREQ=DAILY;BYHOUR=25', new Date('2026-01-01T00:00:00Z'), SH)).toThrow(/BYHOUR/);
  });

  it('returns undefined for a rule that never occurs', () => {
    expect(nextOccurrence('FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30', new Date('2026-01-01T00:00:00Z'), SH)).toBeUndefined();
  });
});

describe('validateRrule', () => {
  it.each([
    'FREQ=DAILY;BYHOUR=8;BYMINUTE=0',
    'FREQ=WEEKLY;BYDAY=MO;BYHOUR=10;BYMINUTE=0',
    'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0',
    'FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0',
    'FREQ=MONTHLY;BYMONTHDAY=-1',
    'RRULE:FREQ=DAILY',
    'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29',
    'FREQ=MINUTELY;INTERVAL=15',
    'FREQ=HOURLY;COUNT=5',
    'FREQ=DAILY;UNTIL=20301231T000000Z',
    'FREQ=DAILY;BYHOUR=8,20;BYMINUTE=0,30',
    'FREQ=HOURLY;BYMINUTE=0,5,10,15,20,25,30,35,40,45,50,55',
    'FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=29',
    'FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE',
    'FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=15',
    'FREQ=MONTHLY;INTERVAL=3;BYDAY=1MO',
    'FREQ=MONTHLY;BYDAY=-1FR',
    'FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO',
    'FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR',
  ])('%s is ok', (rule) => {
    expect(validateRrule(rule)).toEqual({ ok: true });
  });

  it.each([
    ['', 'empty'],
    ['FREQ=DAYLY', 'FREQ'],
    ['BYHOUR=8', 'FREQ'],
    ['FREQ=DAILY;BYHOUR=25', 'BYHOUR'],
    ['FREQ=DAILY;BYHOUR=abc', 'BYHOUR'],
    ['FREQ=DAILY;BYMINUTE=60', 'BYMINUTE'],
    ['FREQ=MONTHLY;BYMONTHDAY=0', 'BYMONTHDAY'],
    ['FREQ=DAILY;FOO=1', 'unparseable'],
    ['FREQ=DAILY;BYDAY=XX', 'BYDAY'],
    ['FREQ=DAILY;INTERVAL=0', 'INTERVAL'],
    ['FREQ=DAILY;COUNT=0', 'COUNT'],
    ['FREQ=SECONDLY', 'SECONDLY'],
    ['FREQ=MINUTELY', 'MINUTELY'],
    ['FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30', 'no occurrence'],
    // Days that never exist under a short period: the library stepped hour by hour (or day by
    // day) to the year 9999 and held the event loop for 20–35 s; refused from the calendar's end.
    ['FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30', 'no occurrence'],
    ['FREQ=MINUTELY;INTERVAL=5;BYMONTH=4;BYMONTHDAY=31', 'INTERVAL'],
    ['FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30', 'no occurrence'],
    ['FREQ=MONTHLY;BYDAY=5MO;BYMONTHDAY=1', 'no occurrence'],
    // An interval whose phase can miss every allowed day.
    ['FREQ=DAILY;INTERVAL=14;BYDAY=MO', 'INTERVAL'],
    ['FREQ=MONTHLY;INTERVAL=12;BYMONTHDAY=30', 'INTERVAL'],
    ['FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29', 'INTERVAL'],
    // Closer than 5 minutes through the BYxxx lists rather than FREQ (fired every second).
    [`FREQ=HOURLY;BYMINUTE=${Array.from({ length: 60 }, (_, i) => i).join(',')};BYSECOND=${Array.from({ length: 60 }, (_, i) => i).join(',')}`, 'less than 5 minutes apart'],
    ['FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0,30', 'less than 5 minutes apart'],
    ['FREQ=HOURLY;BYMINUTE=0,58,59', 'less than 5 minutes apart'],
    ['FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=0;BYMINUTE=0,1', 'less than 5 minutes apart'],
  ])('%s is rejected (%s)', (rule, reason) => {
    const result = validateRrule(rule);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });
});
