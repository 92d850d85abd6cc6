import { describe, expect, it } from 'vitest';
import { decideNudge } from '../../../src/core/proactive/nudge-policy';
import { composeNudge } from '../../../src/core/proactive/nudge-wording';
import { coolingDown, mayPromptRecallNudge, RECALL_NUDGE_COOLDOWN_HOURS, recallNudgeTriggers, type RecalledMemory } from '../../../src/core/proactive/recall-nudge';
import { MEMORY_TYPES } from '../../../src/core/types';
import { DEFAULT_PROACTIVE } from '../../../src/core/proactive/settings';

const now = new Date('2026-12-01T06:00:00Z'); // 14:00 in Shanghai
const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);
const mem = (over: Partial<RecalledMemory> & Pick<RecalledMemory, 'id' | 'type'>): RecalledMemory => ({ text: '年底前把 P99 降到 50ms 以下', status: 'active', pending: false, ...over });

describe('recall nudges (checklist M.3.5: recall triggers the proactive check)', () => {
  it('the types the API hands to the check are exactly those that can trigger, over every memory type', () => {
    for (const type of MEMORY_TYPES) {
      const { triggers } = recallNudgeTriggers({ now, memories: [mem({ id: `m-${type}`, type })] });
      expect(mayPromptRecallNudge(type), type).toBe(triggers.length > 0);
    }
    expect(MEMORY_TYPES.filter(mayPromptRecallNudge).sort()).toEqual(['goal', 'pain_point']);
  });

  it('only open goals and pain points qualify, pain points first, with the scheduled triggers\' keys', () => {
    const { triggers } = recallNudgeTriggers({
      now,
      memories: [
        mem({ id: 'g', type: 'goal' }),
        mem({ id: 'p', type: 'pain_point', text: '部署总是失败' }),
        mem({ id: 'f', type: 'fact' }),
        mem({ id: 'done', type: 'goal', status: 'superseded' }),
        mem({ id: 'agent', type: 'goal', pending: true }),
      ],
    });
    expect(triggers.map((t) => [t.kind, t.key, t.memoryId])).toEqual([
      ['pain_point_recalled', 'pain:p', 'p'],
      ['goal_recalled', 'goal:g', 'g'],
    ]);
  });

  it('holds a memory back for the cool-down after any nudge about it, and lets it go after', () => {
    expect(RECALL_NUDGE_COOLDOWN_HOURS).toBe(24);
    expect(coolingDown(undefined, now)).toBe(false);
    expect(coolingDown(hoursAgo(23.9), now)).toBe(true);
    expect(coolingDown(hoursAgo(24), now)).toBe(false);
    const out = recallNudgeTriggers({ now, memories: [mem({ id: 'g', type: 'goal', lastNudgedAt: hoursAgo(2) }), mem({ id: 'p', type: 'pain_point', lastNudgedAt: hoursAgo(30) })] });
    expect(out.coolingDown).toEqual(['g']);
    expect(out.triggers.map((t) => t.memoryId)).toEqual(['p']);
  });

  it('goes through the user\'s settings like every nudge: off switch, quiet hours, daily cap, probability', () => {
    const { triggers } = recallNudgeTriggers({ now, memories: [mem({ id: 'g', type: 'goal' })] });
    const base = { settings: { ...DEFAULT_PROACTIVE, probability: 1, quietHours: { start: '00:00', end: '00:00' } }, timeZone: 'Asia/Shanghai', now, sentToday: 0, triggers, draw: 0.5 };
    expect(decideNudge(base)).toMatchObject({ send: true, trigger: { kind: 'goal_recalled' } });
    expect(decideNudge({ ...base, settings: { ...base.settings, enabled: false } })).toEqual({ send: false, reason: 'opted-out' });
    expect(decideNudge({ ...base, settings: { ...base.settings, quietHours: { start: '13:00', end: '15:00' } } })).toEqual({ send: false, reason: 'quiet-hours' });
    expect(decideNudge({ ...base, sentToday: base.settings.maxPerDay })).toEqual({ send: false, reason: 'daily-cap' });
    expect(decideNudge({ ...base, settings: { ...base.settings, probability: 0.3 } })).toMatchObject({ send: false, reason: 'probability' });
  });

  it('speaks about the recalled subject in its language', () => {
    const [goal] = recallNudgeTriggers({ now, memories: [mem({ id: 'g', type: 'goal' })] }).triggers;
    const zh = composeNudge(goal!, 0);
    expect(zh).toMatchObject({ lang: 'zh', title: '关于你的目标' });
    expect(zh.body).toContain('「年底前把 P99 降到 50ms 以下」');
    const [pain] = recallNudgeTriggers({ now, memories: [mem({ id: 'p', type: 'pain_point', text: 'Deploys keep failing on Fridays' })] }).triggers;
    expect(composeNudge(pain!, 0.99).body).toContain('"Deploys keep failing on Fridays"');
  });
});
