import { describe, expect, it } from 'vitest';
import { ARCHIVE_THRESHOLD, HALF_LIFE_DAYS, computeDecay, decayTimeConstantDays } from '../../../src/core/decay';
import {
  AUTO_REINFORCE_LEVELS,
  addSweepCounts,
  appendCapped,
  decayConstantsForSql,
  emptySweepCounts,
  restoreRefusal,
  sweepDecision,
  type SweepCandidate,
} from '../../../src/core/lifecycle/sweep';
import type { ImportanceLevel, MemoryStatus } from '../../../src/core/types';

const NOW = new Date('2027-01-01T03:00:00Z');
const DAY = 86_400_000;
const daysAgo = (d: number): Date => new Date(NOW.getTime() - d * DAY);
const memory = (over: Partial<SweepCandidate> = {}): SweepCandidate => ({
  status: 'active',
  type: 'fact',
  importanceLevel: 'medium',
  lastAccessedAt: daysAgo(1),
  expiresAt: null,
  ...over,
});

describe('sweepDecision', () => {
  it('keeps a recently accessed memory and reports its decay', () => {
    const d = sweepDecision(memory({ lastAccessedAt: daysAgo(30) }), NOW);
    expect(d.action).toBeNull();
    expect(d.decay).toBeCloseTo(0.5, 9); // medium half-life: 30 days (M.2 acceptance)
  });

  it('archives once decay falls below 0.2, not before (medium crosses at 30·log2(5) ≈ 69.66 days)', () => {
    expect(sweepDecision(memory({ lastAccessedAt: daysAgo(69.6) }), NOW).action).toBeNull();
    const archived = sweepDecision(memory({ lastAccessedAt: daysAgo(69.7) }), NOW);
    expect(archived.action).toBe('archive');
    expect(archived.decay!).toBeLessThan(ARCHIVE_THRESHOLD);
  });

  it('uses the same curve as recall (computeDecay) for every level', () => {
    for (const level of Object.keys(HALF_LIFE_DAYS) as ImportanceLevel[]) {
      for (const days of [0, 1, 15, 45, 100, 400]) {
        const m = memory({ importanceLevel: level, lastAccessedAt: daysAgo(days) });
        const expected = computeDecay({ lastAccessedAt: m.lastAccessedAt, now: NOW, importanceLevel: level });
        const d = sweepDecision(m, NOW);
        expect(d.decay).toBe(expected);
        expect(d.action).toBe(expected < ARCHIVE_THRESHOLD ? 'archive' : null);
      }
    }
  });

  it('a high memory untouched for 100 days is only deprioritised; a low one is archived after 35', () => {
    expect(sweepDecision(memory({ importanceLevel: 'high', lastAccessedAt: daysAgo(100) }), NOW).action).toBeNull();
    expect(sweepDecision(memory({ importanceLevel: 'low', lastAccessedAt: daysAgo(35) }), NOW).action).toBe('archive');
  });

  it('never archives standing instructions for decay (like the capacity cap), but still expires them', () => {
    const faded = sweepDecision(memory({ type: 'instruction', importanceLevel: 'low', lastAccessedAt: daysAgo(400) }), NOW);
    expect(faded.action).toBeNull();
    expect(faded.decay!).toBeLessThan(ARCHIVE_THRESHOLD);
    expect(sweepDecision(memory({ type: 'instruction', expiresAt: daysAgo(1) }), NOW).action).toBe('expire');
  });

  it('expires at expires_at (inclusive), and expiry wins over decay', () => {
    expect(sweepDecision(memory({ expiresAt: NOW }), NOW).action).toBe('expire');
    expect(sweepDecision(memory({ expiresAt: new Date(NOW.getTime() + 1) }), NOW).action).toBeNull();
    expect(sweepDecision(memory({ expiresAt: daysAgo(1), lastAccessedAt: daysAgo(400), importanceLevel: 'low' }), NOW).action).toBe('expire');
  });

  it('expires archived memories whose lifetime ended and leaves other archived ones alone', () => {
    expect(sweepDecision(memory({ status: 'archived', expiresAt: daysAgo(1) }), NOW)).toEqual({ decay: null, action: 'expire' });
    expect(sweepDecision(memory({ status: 'archived', expiresAt: null, lastAccessedAt: daysAgo(900) }), NOW)).toEqual({ decay: null, action: null });
  });

  it('never touches superseded or expired memories', () => {
    for (const status of ['superseded', 'expired'] as MemoryStatus[]) {
      expect(sweepDecision(memory({ status, expiresAt: daysAgo(5), lastAccessedAt: daysAgo(500) }), NOW)).toEqual({ decay: null, action: null });
    }
  });
});

describe('decayConstantsForSql', () => {
  it('lists every level with τ = half-life / ln 2, in parallel arrays', () => {
    const { levels, tauDays } = decayConstantsForSql();
    expect([...levels].sort()).toEqual(['critical', 'high', 'low', 'medium']);
    expect(tauDays).toHaveLength(levels.length);
    levels.forEach((level, i) => {
      expect(tauDays[i]).toBe(decayTimeConstantDays(level));
      expect(Math.exp(-HALF_LIFE_DAYS[level] / tauDays[i]!)).toBeCloseTo(0.5, 12);
    });
  });
});

describe('restoreRefusal', () => {
  it('restores archived memories only', () => {
    expect(restoreRefusal({ status: 'archived', expiresAt: null }, NOW)).toBeNull();
    expect(restoreRefusal({ status: 'archived', expiresAt: new Date(NOW.getTime() + DAY) }, NOW)).toBeNull();
    expect(restoreRefusal({ status: 'active', expiresAt: null }, NOW)).toBe('already_active');
    expect(restoreRefusal({ status: 'expired', expiresAt: null }, NOW)).toBe('not_archived');
    expect(restoreRefusal({ status: 'superseded', expiresAt: null }, NOW)).toBe('not_archived');
  });

  it('refuses an archived memory whose lifetime has ended', () => {
    expect(restoreRefusal({ status: 'archived', expiresAt: NOW }, NOW)).toBe('past_expiry');
  });

  it('a restored memory (last access = now) is not archived again by the next sweep', () => {
    const restoredAt = NOW;
    const nextSweep = new Date(NOW.getTime() + DAY);
    expect(sweepDecision(memory({ importanceLevel: 'low', lastAccessedAt: restoredAt }), nextSweep).action).toBeNull();
  });
});

describe('auto-reinforced levels', () => {
  it('are high and critical (seed M.2.3: 定期强化 high 级别)', () => {
    expect([...AUTO_REINFORCE_LEVELS].sort()).toEqual(['critical', 'high']);
  });
});

describe('counts and transition samples', () => {
  it('adds counts field by field', () => {
    const a = addSweepCounts(emptySweepCounts(), { scanned: 10, archived: 2 });
    expect(addSweepCounts(a, { scanned: 5, expired: 1, vectorsRemoved: 3 })).toEqual({
      scanned: 15,
      updated: 0,
      archived: 2,
      expired: 1,
      capacityArchived: 0,
      vectorsRemoved: 3,
    });
  });

  it('caps the sample and says when it left something out', () => {
    expect(appendCapped([1, 2], [3], 5)).toEqual({ list: [1, 2, 3], truncated: false });
    expect(appendCapped([1, 2], [3, 4, 5], 4)).toEqual({ list: [1, 2, 3, 4], truncated: true });
    expect(appendCapped([1, 2, 3], [4], 3)).toEqual({ list: [1, 2, 3], truncated: true });
    expect(appendCapped([1, 2, 3], [], 3)).toEqual({ list: [1, 2, 3], truncated: false });
  });
});
