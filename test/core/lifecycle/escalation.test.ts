import { describe, expect, it } from 'vitest';
import { renderDigestTemplate, type DigestSections } from '../../../src/core/proactive/digest-content';
import { escalationKey, escalationsFrom, type ImportanceChange } from '../../../src/core/lifecycle/escalation';

const at = (m: number) => new Date(Date.UTC(2026, 11, 1, 10, m));
const change = (over: Partial<ImportanceChange> & Pick<ImportanceChange, 'eventId' | 'before' | 'after'>): ImportanceChange => ({
  memoryId: 'm1',
  text: '服务器的 P99 延迟一直降不下来，很急',
  type: 'pain_point',
  at: at(0),
  ...over,
});

describe('escalationsFrom (checklist M.1 should_escalate, put to work)', () => {
  it('surfaces a rise into the escalation band (≥ 0.8, level up) and nothing below it or without a level change', () => {
    expect(escalationsFrom([change({ eventId: '1', before: 0.6, after: 0.82 })])).toEqual([
      { id: 'm1', text: '服务器的 P99 延迟一直降不下来，很急', type: 'pain_point', fromLevel: 'medium', toLevel: 'high', score: 0.82, causeEventIds: ['1'] },
    ]);
    // Level up but under the threshold (medium → high at 0.75): important, not yet escalated.
    expect(escalationsFrom([change({ eventId: '2', before: 0.6, after: 0.75 })])).toEqual([]);
    // Over the threshold but the level stayed (high 0.8 → high 0.84): it was escalated already.
    expect(escalationsFrom([change({ eventId: '3', before: 0.8, after: 0.84 })])).toEqual([]);
    // A fall is never a rise.
    expect(escalationsFrom([change({ eventId: '4', before: 0.9, after: 0.5 })])).toEqual([]);
  });

  it('lists a memory once with every rise it stands for, the highest level reached, most important first', () => {
    const out = escalationsFrom([
      change({ eventId: '10', before: 0.84, after: 0.9, at: at(5) }),
      change({ eventId: '9', before: 0.5, after: 0.81, at: at(1) }),
      change({ eventId: '11', memoryId: 'm2', text: 'goal', type: 'goal', before: 0.6, after: 0.8, at: at(2) }),
    ]);
    expect(out.map((m) => [m.id, m.fromLevel, m.toLevel, m.score, m.causeEventIds])).toEqual([
      ['m1', 'medium', 'critical', 0.9, ['9', '10']],
      ['m2', 'medium', 'high', 0.8, ['11']],
    ]);
  });

  it('is bounded, keys each rise by its own audit event, and renders as its own digest section', () => {
    const many = Array.from({ length: 30 }, (_, i) => change({ eventId: String(i), memoryId: `m${i}`, before: 0.5, after: 0.8 + i / 1000 }));
    expect(escalationsFrom(many)).toHaveLength(8);
    expect(escalationKey('42')).toBe('escalate:42');
    const sections: DigestSections = {
      date: '2026-12-01',
      timeZone: 'UTC',
      lang: 'zh',
      conversations: { count: 0, messages: 0, topics: [], highlights: [] },
      importantMemories: [],
      escalatedMemories: escalationsFrom([change({ eventId: '1', before: 0.6, after: 0.82 })]),
      openQuestions: [],
      suggestions: [],
    };
    expect(renderDigestTemplate(sections)).toContain('📈 越来越重要 / Rising in importance\n- [pain_point|medium→high] 服务器的 P99 延迟一直降不下来，很急');
    expect(renderDigestTemplate({ ...sections, escalatedMemories: [] })).not.toContain('越来越重要');
  });
});
