import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { retentionCutoff } from '../src/core/lifecycle/retention';

describe('retention configuration', () => {
  it('defaults: messages and episodes a year, notifications and digests 90 days', () => {
    expect(loadConfig({}).retention).toEqual({ messages: 365, episodes: 365, notifications: 90, digests: 90 });
  });

  it('reads 0 and "none" as keep forever, and a blank value as the default', () => {
    const r = loadConfig({ RETENTION_MESSAGES_DAYS: 'none', RETENTION_EPISODES_DAYS: '0', RETENTION_NOTIFICATIONS_DAYS: ' ', RETENTION_DIGESTS_DAYS: '7' }).retention;
    expect(r).toEqual({ messages: null, episodes: null, notifications: 90, digests: 7 });
    expect(retentionCutoff(new Date('2026-06-10T00:00:00Z'), r.digests)?.toISOString()).toBe('2026-06-03T00:00:00.000Z');
    expect(retentionCutoff(new Date('2026-06-10T00:00:00Z'), r.messages)).toBeNull();
  });

  it('refuses negative, fractional and non-numeric ages, naming the variable', () => {
    for (const bad of ['-1', '1.5', 'forever']) expect(() => loadConfig({ RETENTION_MESSAGES_DAYS: bad })).toThrow(/RETENTION_MESSAGES_DAYS/);
  });
});
