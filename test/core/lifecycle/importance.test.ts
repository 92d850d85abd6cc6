import { describe, expect, it } from 'vitest';
import {
  ESCALATION_THRESHOLD,
  IMPACT_THRESHOLD,
  IMPORTANCE_WEIGHTS,
  frequencyComponent,
  impactComponent,
  importanceLevelFor,
  recencyComponent,
  scoreImportance,
  shouldEscalate,
} from '../../../src/core/lifecycle/importance';

const NOW = new Date('2026-09-01T12:00:00Z');
const daysAgo = (d: number): Date => new Date(NOW.getTime() - d * 86_400_000);

describe('importance components', () => {
  it('weights sum to 1 with the checklist values', () => {
    expect(IMPORTANCE_WEIGHTS).toEqual({ frequency: 0.35, recency: 0.2, emotion: 0.25, impact: 0.2 });
  });

  it('frequency saturates', () => {
    expect(frequencyComponent(0)).toBe(0);
    expect(frequencyComponent(1)).toBeCloseTo(0.2);
    expect(frequencyComponent(5)).toBe(1);
    expect(frequencyComponent(50)).toBe(1);
    expect(frequencyComponent(-2)).toBe(0);
  });

  it('recency is 1 for recent access and decreases with age', () => {
    expect(recencyComponent(NOW, NOW)).toBe(1);
    expect(recencyComponent(daysAgo(2), NOW)).toBe(1);
    expect(recencyComponent(daysAgo(10), NOW)).toBeLessThan(1);
    expect(recencyComponent(daysAgo(100), NOW)).toBeLessThan(recencyComponent(daysAgo(10), NOW));
    // Future access (clock skew) counts as now.
    expect(recencyComponent(new Date(NOW.getTime() + 86_400_000), NOW)).toBe(1);
  });

  it('impact is topics / IMPACT_THRESHOLD capped at 1', () => {
    expect(impactComponent(0)).toBe(0);
    expect(impactComponent(IMPACT_THRESHOLD)).toBe(1);
    expect(impactComponent(IMPACT_THRESHOLD * 3)).toBe(1);
    expect(impactComponent(1)).toBeCloseTo(1 / IMPACT_THRESHOLD);
  });
});

describe('scoreImportance', () => {
  it('high frequency + strong emotion ⇒ importance ≥ 0.8 (M.1 acceptance)', () => {
    const urgent = scoreImportance({ frequencyCount: 5, lastAccessedAt: NOW, now: NOW, emotionScore: 1.0, associatedTopics: [] });
    expect(urgent.score).toBeGreaterThanOrEqual(0.8);
    expect(urgent.level).toBe('high');
    // "很重要" (0.9) mentioned 8 times, accessed two days ago, touching two topics.
    const important = scoreImportance({
      frequencyCount: 8,
      lastAccessedAt: daysAgo(2),
      now: NOW,
      emotionScore: 0.9,
      associatedTopics: ['工作', '健康'],
    });
    expect(important.score).toBeGreaterThanOrEqual(0.8);
  });

  it('is the weighted sum of its components', () => {
    const r = scoreImportance({ frequencyCount: 2, lastAccessedAt: daysAgo(20), now: NOW, emotionScore: 0.6, associatedTopics: ['a', 'b', 'b'] });
    const c = r.components;
    expect(c.impact).toBeCloseTo(2 / IMPACT_THRESHOLD); // duplicates counted once
    expect(r.score).toBeCloseTo(0.35 * c.frequency + 0.2 * c.recency + 0.25 * c.emotion + 0.2 * c.impact, 6);
  });

  it('clamps inputs so the score stays in [0, 1]', () => {
    const max = scoreImportance({ frequencyCount: 99, lastAccessedAt: NOW, now: NOW, emotionScore: 7, associatedTopics: ['a', 'b', 'c', 'd', 'e', 'f'] });
    expect(max.score).toBe(1);
    expect(max.level).toBe('critical');
    const min = scoreImportance({ frequencyCount: 0, lastAccessedAt: daysAgo(3650), now: NOW, emotionScore: -1, associatedTopics: [] });
    expect(min.score).toBeGreaterThanOrEqual(0);
    expect(min.level).toBe('low');
  });

  it('orders memories by importance: frequent and emotional above casual', () => {
    const casual = scoreImportance({ frequencyCount: 1, lastAccessedAt: daysAgo(40), now: NOW, emotionScore: 0.1, associatedTopics: [] });
    const worried = scoreImportance({ frequencyCount: 3, lastAccessedAt: daysAgo(5), now: NOW, emotionScore: 0.7, associatedTopics: ['家庭'] });
    const urgent = scoreImportance({ frequencyCount: 6, lastAccessedAt: NOW, now: NOW, emotionScore: 1, associatedTopics: ['工作', '健康'] });
    expect(casual.score).toBeLessThan(worried.score);
    expect(worried.score).toBeLessThan(urgent.score);
  });
});

describe('levels and escalation', () => {
  it('maps thresholds low < 0.4 ≤ medium < 0.7 ≤ high < 0.85 ≤ critical', () => {
    expect(importanceLevelFor(0.39)).toBe('low');
    expect(importanceLevelFor(0.4)).toBe('medium');
    expect(importanceLevelFor(0.69)).toBe('medium');
    expect(importanceLevelFor(0.7)).toBe('high');
    expect(importanceLevelFor(0.849)).toBe('high');
    expect(importanceLevelFor(0.85)).toBe('critical');
  });

  it('escalates once when crossing the threshold', () => {
    expect(ESCALATION_THRESHOLD).toBe(0.8);
    expect(shouldEscalate({ score: 0.8, level: 'high' })).toBe(true);
    expect(shouldEscalate({ score: 0.79, level: 'high' })).toBe(false);
    expect(shouldEscalate({ score: 0.82, level: 'high' }, 'medium')).toBe(true);
    expect(shouldEscalate({ score: 0.82, level: 'high' }, 'high')).toBe(false);
    expect(shouldEscalate({ score: 0.9, level: 'critical' }, 'high')).toBe(true);
  });
});
