import { describe, expect, it } from 'vitest';
import { isValidTimeZone } from '../../../src/core/time/zones';

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
