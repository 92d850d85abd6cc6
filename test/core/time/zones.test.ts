import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { floatingReference } from '../../../src/core/time/time-words';
import { canonicalTimeZone, isoDateIn, isoInstant, isValidTimeZone, wallClockIn } from '../../../src/core/time/zones';
import { mulberry32 } from '../../support/prng';

describe('isValidTimeZone', () => {
  it('answers as luxon does, the second time from memory as the first', () => {
    for (let round = 0; round < 2; round += 1) {
      expect(isValidTimeZone('Asia/Shanghai')).toBe(true);
      expect(isValidTimeZone('UTC')).toBe(true);
      expect(isValidTimeZone('America/New_York')).toBe(true);
      expect(isValidTimeZone('Fantasia/Castle')).toBe(false);
      expect(isValidTimeZone('Sport~~blorp')).toBe(false);
      expect(isValidTimeZone('')).toBe(false);
      expect(isValidTimeZone(undefined)).toBe(false);
      expect(isValidTimeZone(null)).toBe(false);
    }
  });

  it('keeps answering past the bound of remembered names', () => {
    for (let i = 0; i < 1500; i += 1) expect(isValidTimeZone(`Nowhere/Place${i}`)).toBe(false);
    expect(isValidTimeZone('Europe/Paris')).toBe(true);
    expect(isValidTimeZone('Nowhere/Place1499')).toBe(false);
  });
});

describe('canonicalTimeZone', () => {
  it('spells a zone luxon accepts in any case as tzdata does (Temporal Schedules read it case-sensitively)', () => {
    expect(isValidTimeZone('asia/shanghai')).toBe(true);
    expect(canonicalTimeZone('asia/shanghai')).toBe('Asia/Shanghai');
    expect(canonicalTimeZone('utc')).toBe('UTC');
    expect(canonicalTimeZone('AMERICA/NEW_YORK')).toBe('America/New_York');
    expect(canonicalTimeZone('etc/gmt+12')).toBe('Etc/GMT+12');
    expect(canonicalTimeZone('etc/utc')).toBe('UTC');
  });

  it('keeps a correctly spelt name, links included', () => {
    for (const zone of ['UTC', 'Asia/Shanghai', 'America/New_York', 'Asia/Kolkata', 'Europe/Kyiv', 'Etc/UTC']) expect(canonicalTimeZone(zone)).toBe(zone);
  });
});

describe('isoDateIn', () => {
  const luxon = (date: Date, zone: string) => DateTime.fromJSDate(date, { zone }).toISODate();

  it('answers as luxon does a millisecond either side of every local midnight, in zones with odd offsets and summer time', () => {
    // Where the answer changes is a local midnight; zones whose summer time starts at midnight
    // (Santiago, Beirut) and offsets off the hour (Kathmandu, Chatham, Lord Howe) move it.
    const zones = ['UTC', 'Asia/Shanghai', 'America/New_York', 'Europe/London', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns', 'America/Santiago', 'Asia/Beirut', 'Pacific/Kiritimati', 'asia/tokyo'];
    for (const zone of zones) {
      for (let day = DateTime.fromObject({ year: 2026, month: 1, day: 1 }, { zone }); day.year === 2026; day = day.plus({ days: 1 })) {
        const midnight = day.startOf('day').toMillis();
        for (const at of [midnight - 1, midnight, midnight + 1, midnight + 12 * 3_600_000]) expect(isoDateIn(new Date(at), zone), `${zone} ${new Date(at).toISOString()}`).toBe(luxon(new Date(at), zone));
      }
    }
  });

  it('answers as luxon does on random instants over three centuries, and on the dates ISO writes otherwise', () => {
    const rand = mulberry32(7);
    const zones = ['Asia/Shanghai', 'Europe/Paris', 'America/Los_Angeles', 'Asia/Kolkata', 'Africa/Casablanca'];
    for (let i = 0; i < 5_000; i++) {
      const date = new Date(Date.UTC(1900, 0, 1) + Math.floor(rand() * 300 * 365.25 * 86_400_000));
      const zone = zones[i % zones.length]!;
      expect(isoDateIn(date, zone)).toBe(luxon(date, zone));
    }
    for (const date of [new Date('0999-12-31T20:00:00Z'), new Date('1000-01-01T00:00:00Z'), new Date('9999-12-31T20:00:00Z'), new Date(Date.UTC(-50, 5, 1)), new Date(Number.NaN)]) {
      for (const zone of ['UTC', 'Asia/Shanghai', 'America/New_York']) expect(isoDateIn(date, zone)).toBe(luxon(date, zone));
    }
  });

  it('answers as luxon does past the bound on remembered dates, in several zones at once', () => {
    const zones = ['Asia/Shanghai', 'Europe/Paris', 'America/Los_Angeles'];
    const start = Date.UTC(2020, 0, 1);
    for (let i = 0; i < 25_000; i++) {
      const date = new Date(start + i * 3_700_000);
      const zone = zones[i % zones.length]!;
      if (i % 97 === 0 || i > 24_900) expect(isoDateIn(date, zone)).toBe(luxon(date, zone));
      else isoDateIn(date, zone);
    }
    for (let i = 0; i < 300; i++) {
      const date = new Date(start + i * 3_700_000);
      for (const zone of zones) expect(isoDateIn(date, zone)).toBe(luxon(date, zone));
    }
  });
});

describe('isoInstant', () => {
  it('answers as toISOString, asked again or not, and throws as it does for an invalid date', () => {
    const rand = mulberry32(11);
    const instants = Array.from({ length: 2_000 }, () => new Date(Date.UTC(-300, 0, 1) + Math.floor(rand() * 12_000 * 365.25 * 86_400_000)));
    for (const round of [1, 2]) for (const date of instants) expect(isoInstant(date), `round ${round}`).toBe(date.toISOString());
    for (const date of [new Date(0), new Date('0999-12-31T23:59:59.999Z'), new Date(Date.UTC(10_000, 0, 1)), new Date(-1)]) expect(isoInstant(date)).toBe(date.toISOString());
    expect(() => isoInstant(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('wallClockIn', () => {
  const luxon = (date: Date, zone: string) => floatingReference(DateTime.fromJSDate(date, { zone })).getTime();

  it('answers as luxon does around every change of offset and every local midnight of 2026, and on random instants', () => {
    const zones = ['UTC', 'utc', 'Asia/Shanghai', 'America/New_York', 'Europe/London', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns', 'America/Santiago', 'Asia/Beirut', 'Pacific/Kiritimati', 'asia/tokyo', 'Etc/GMT+8'];
    for (const zone of zones) {
      for (let day = DateTime.fromObject({ year: 2026, month: 1, day: 1 }, { zone }); day.year === 2026; day = day.plus({ days: 1 })) {
        const midnight = day.startOf('day');
        const next = day.plus({ days: 1 }).startOf('day');
        const at = [midnight.toMillis() - 1_000, midnight.toMillis(), midnight.toMillis() + 12 * 3_600_000];
        // The day summer time starts or ends: each quarter hour from midnight and the millisecond
        // before it (every change of offset since 1970 falls on a local quarter hour).
        if (midnight.offset !== next.offset) for (let t = midnight.toMillis(); t < next.toMillis(); t += 15 * 60_000) at.push(t - 1, t);
        for (const t of at) expect(wallClockIn(new Date(t), zone)?.getTime(), `${zone} ${new Date(t).toISOString()}`).toBe(luxon(new Date(t), zone));
      }
    }
    const rand = mulberry32(11);
    for (let i = 0; i < 2_000; i++) {
      const date = new Date(Date.UTC(1900, 0, 1) + Math.floor(rand() * 300 * 365.25 * 86_400_000));
      const zone = zones[i % zones.length]!;
      expect(wallClockIn(date, zone)?.getTime()).toBe(luxon(date, zone));
    }
    // Some 20,000 comparisons through luxon: seconds on a loaded machine.
  }, 60_000);

  it('leaves to luxon what it reads otherwise than Intl, and the years ISO writes otherwise', () => {
    for (const zone of ['utc+8', 'local', 'system', 'Fantasia/Castle']) expect(wallClockIn(new Date(), zone)).toBeNull();
    expect(wallClockIn(new Date('0999-12-31T12:00:00Z'), 'UTC')).toBeNull();
    expect(wallClockIn(new Date(Number.NaN), 'UTC')).toBeNull();
    expect(wallClockIn(new Date('1000-01-01T12:00:00Z'), 'UTC')?.getTime()).toBe(luxon(new Date('1000-01-01T12:00:00Z'), 'UTC'));
  });
});
