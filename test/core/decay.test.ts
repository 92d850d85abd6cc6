import { describe, expect, it } from 'vitest';
import {
  ARCHIVE_THRESHOLD,
  DEPRIORITIZE_THRESHOLD,
  HALF_LIFE_DAYS,
  capacityOverflow,
  computeDecay,
  decayTimeConstantDays,
  defaultExpiry,
  shouldArchive,
  shouldDeprioritize,
} from '../../src/core/decay';
import type { ImportanceLevel } from '../../src/core/types';

const NOW = new Date('2026-09-01T00:00:00Z');
const DAY = 86_400_000;
const daysAgo = (d: number): Date => new Date(NOW.getTime() - d * DAY);
const decayAt = (days: number, importanceLevel: ImportanceLevel): number =>
  computeDecay({ lastAccessedAt: daysAgo(days), now: NOW, importanceLevel });

describe('computeDecay', () => {
  it('a medium memory is ≈ 0.5 after 30 days (M.2 acceptance)', () => {
    expect(decayAt(30, 'medium')).toBeCloseTo(0.5, 6);
    expect(decayTimeConstantDays('medium')).toBeCloseTo(30 / Math.LN2, 6); // ≈ 43.3 d
  });

  it('a high memory decays at 1/6 the speed of a low one (M.2 acceptance)', () => {
    expect(decayTimeConstantDays('high') / decayTimeConstantDays('low')).toBeCloseTo(6, 9);
    // Equivalently, the rate −ln(decay)/days of low is six times that of high.
    const rate = (level: ImportanceLevel): number => -Math.log(decayAt(10, level)) / 10;
    expect(rate('low') / rate('high')).toBeCloseTo(6, 9);
  });

  it('half-lives grow monotonically with importance', () => {
    expect(HALF_LIFE_DAYS.low).toBeLessThan(HALF_LIFE_DAYS.medium);
    expect(HALF_LIFE_DAYS.medium).toBeLessThan(HALF_LIFE_DAYS.high);
    expect(HALF_LIFE_DAYS.high).toBeLessThan(HALF_LIFE_DAYS.critical);
    expect(decayAt(60, 'low')).toBeLessThan(decayAt(60, 'critical'));
  });

  it('is 1 when just accessed, and never above 1 for future access', () => {
    expect(decayAt(0, 'low')).toBe(1);
    expect(computeDecay({ lastAccessedAt: new Date(NOW.getTime() + DAY), now: NOW, importanceLevel: 'low' })).toBe(1);
  });

  it('uses fractional days', () => {
    expect(decayAt(0.5, 'low')).toBeLessThan(1);
    expect(decayAt(0.5, 'low')).toBeGreaterThan(decayAt(1, 'low'));
  });
});

describe('thresholds', () => {
  it('deprioritises below 0.5 and archives below 0.2', () => {
    expect(DEPRIORITIZE_THRESHOLD).toBe(0.5);
    expect(ARCHIVE_THRESHOLD).toBe(0.2);
    expect(shouldDeprioritize(0.49)).toBe(true);
    expect(shouldDeprioritize(0.5)).toBe(false);
    expect(shouldArchive(0.19)).toBe(true);
    expect(shouldArchive(0.2)).toBe(false);
  });

  it('a low memory untouched for ~35 days is archived, a high one is not', () => {
    expect(shouldArchive(decayAt(36, 'low'))).toBe(true);
    expect(shouldArchive(decayAt(36, 'high'))).toBe(false);
    expect(shouldDeprioritize(decayAt(36, 'high'))).toBe(false);
    // A medium memory crosses 0.2 after 30·log2(5) ≈ 69.7 days.
    expect(shouldArchive(decayAt(69, 'medium'))).toBe(false);
    expect(shouldArchive(decayAt(70, 'medium'))).toBe(true);
  });
});

describe('defaultExpiry', () => {
  const saidAt = new Date('2026-08-01T09:30:00Z');

  it('gives events 30 days from when they were said', () => {
    expect(defaultExpiry('event', saidAt)?.toISOString()).toBe('2026-08-31T09:30:00.000Z');
  });

  it('leaves long-lived types without expiry', () => {
    for (const type of ['fact', 'preference', 'goal', 'pain_point', 'instruction', 'decision', 'assistant_contribution'] as const) {
      expect(defaultExpiry(type, saidAt)).toBeNull();
    }
  });

  it('is configurable per type', () => {
    expect(defaultExpiry('event', saidAt, { event: 7 })?.toISOString()).toBe('2026-08-08T09:30:00.000Z');
    expect(defaultExpiry('event', saidAt, { event: null })).toBeNull();
    expect(defaultExpiry('goal', saidAt, { goal: 90 })?.toISOString()).toBe('2026-10-30T09:30:00.000Z');
    expect(defaultExpiry('event', saidAt, { event: undefined })?.toISOString()).toBe('2026-08-31T09:30:00.000Z');
  });
});

describe('capacityOverflow', () => {
  const m = (id: string, importance: number, type: 'fact' | 'instruction' = 'fact', accessed = 0) => ({
    id,
    type,
    importance,
    lastAccessedAt: daysAgo(accessed),
  });

  it('returns the least important ids beyond the cap', () => {
    const memories = [m('a', 0.9), m('b', 0.2), m('c', 0.6), m('d', 0.4)];
    expect(capacityOverflow(memories, 2).sort()).toEqual(['b', 'd']);
    expect(capacityOverflow(memories, 4)).toEqual([]);
    expect(capacityOverflow(memories, 10)).toEqual([]);
    expect(capacityOverflow(memories, 0).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('does not trust the input order and breaks ties by recency then id', () => {
    const memories = [m('old', 0.5, 'fact', 30), m('new', 0.5, 'fact', 1), m('z', 0.5, 'fact', 1)];
    expect(capacityOverflow(memories, 1).sort()).toEqual(['old', 'z']);
  });

  it('never evicts instructions but counts them toward the cap', () => {
    const memories = [m('i1', 0.1, 'instruction'), m('f1', 0.9), m('f2', 0.8)];
    expect(capacityOverflow(memories, 2)).toEqual(['f2']);
    expect(capacityOverflow(memories, 1).sort()).toEqual(['f1', 'f2']);
  });

  it('rejects invalid caps', () => {
    expect(() => capacityOverflow([], -1)).toThrow(RangeError);
    expect(() => capacityOverflow([], Number.NaN)).toThrow(RangeError);
  });
});
