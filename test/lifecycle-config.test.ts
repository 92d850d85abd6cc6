import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { defaultExpiry } from '../src/core/decay';

describe('lifecycle configuration', () => {
  it('defaults: cap 5000, events live 30 days, pages of 5000', () => {
    expect(loadConfig({}).lifecycle).toEqual({ maxActivePerUser: 5000, ttlDays: { event: 30 }, sweepBatchSize: 5000 });
  });

  it('parses per-type lifetimes, "none" meaning never', () => {
    const { ttlDays } = loadConfig({ MEMORY_TTL_DAYS: 'event:7, goal:90 ,preference:none' }).lifecycle;
    expect(ttlDays).toEqual({ event: 7, goal: 90, preference: null });
    const said = new Date('2026-05-01T00:00:00Z');
    expect(defaultExpiry('event', said, ttlDays)?.toISOString()).toBe('2026-05-08T00:00:00.000Z');
    expect(defaultExpiry('goal', said, ttlDays)?.toISOString()).toBe('2026-07-30T00:00:00.000Z');
    expect(defaultExpiry('fact', said, ttlDays)).toBeNull();
  });

  it('refuses unknown types, non-positive or fractional days, and bad sizes, naming the variable', () => {
    expect(() => loadConfig({ MEMORY_TTL_DAYS: 'mood:3' })).toThrow(/MEMORY_TTL_DAYS/);
    expect(() => loadConfig({ MEMORY_TTL_DAYS: 'event:0' })).toThrow(/MEMORY_TTL_DAYS/);
    expect(() => loadConfig({ MEMORY_TTL_DAYS: 'event:1.5' })).toThrow(/MEMORY_TTL_DAYS/);
    expect(() => loadConfig({ MEMORY_TTL_DAYS: 'event' })).toThrow(/MEMORY_TTL_DAYS/);
    expect(() => loadConfig({ MAX_ACTIVE_MEMORIES_PER_USER: '0' })).toThrow(/MAX_ACTIVE_MEMORIES_PER_USER/);
    expect(() => loadConfig({ SWEEP_BATCH_SIZE: '10' })).toThrow(/SWEEP_BATCH_SIZE/);
  });
});
