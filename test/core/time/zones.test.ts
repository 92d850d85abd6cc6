import { describe, expect, it } from 'vitest';
import { canonicalTimeZone, isValidTimeZone } from '../../../src/core/time/zones';

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
