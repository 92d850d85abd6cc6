import { describe, expect, it } from 'vitest';
import { planRoutes } from '../../../src/core/recall/query-intent';

describe('planRoutes', () => {
  it('turns the recency route on for references to the recent past', () => {
    expect(planRoutes('上次那个问题解决了吗').recent).toBe(true);
    expect(planRoutes('what did we talk about last time?').recent).toBe(true);
    expect(planRoutes('推荐个午餐').recent).toBe(false);
  });

  it('maps cue words to memory types', () => {
    expect(planRoutes('你之前给我推荐过什么书？').types).toContain('assistant_contribution');
    expect(planRoutes('推荐个午餐').types).toEqual(expect.arrayContaining(['preference', 'fact']));
    expect(planRoutes('my goals for this year').types).toContain('goal');
    expect(planRoutes('payment-svc 又超时了').types).toContain('pain_point');
    expect(planRoutes('这周末我该做什么').types).toEqual(expect.arrayContaining(['event', 'goal']));
    expect(planRoutes('what should I cook for dinner?').types).toContain('fact');
  });

  it('plans no type route for a query without cues', () => {
    expect(planRoutes('payment-svc').types).toEqual([]);
    expect(planRoutes('hello there').types).toEqual([]);
  });
});
