import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { zoneFromIsoOffset } from '../../../src/core/time/zone-hint';

describe('zoneFromIsoOffset', () => {
  it.each([
    ['2026-06-12T10:00:00+08:00', 'Etc/GMT-8'],
    ['2026-04-14T08:30:00-04:00', 'Etc/GMT+4'],
    ['2026-09-14T12:00:00Z', 'UTC'],
    ['2026-09-14T12:00:00+00:00', 'UTC'],
    ['2026-01-01T00:00:00+1400', 'Etc/GMT-14'],
  ])('%s → %s, a valid IANA zone at that offset', (iso, zone) => {
    expect(zoneFromIsoOffset(iso)).toBe(zone);
    expect(IANAZone.isValidZone(zone)).toBe(true);
    expect(IANAZone.create(zone).offset(Date.parse(iso))).toBe(zone === 'UTC' ? 0 : -Number(zone.slice(7)) * 60);
  });

  it('gives no hint for half-hour offsets or a missing offset', () => {
    expect(zoneFromIsoOffset('2026-06-12T10:00:00+05:30')).toBeUndefined();
    expect(zoneFromIsoOffset('2026-06-12T10:00:00')).toBeUndefined();
  });
});
