import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { TASK_SCOPE_DAYS } from '../src/core/extraction/candidate';
import { isHabitual } from '../src/core/extraction/habits';
import { isTaskScoped } from '../src/core/extraction/match';
import { extractCandidatesOffline } from '../src/core/extraction/offline-extractor';
import type { ConversationMessage, MemoryCandidate } from '../src/core/types';

const AT = new Date('2026-04-02T09:00:00Z');
const candidatesOf = (content: string): MemoryCandidate[] => extractCandidatesOffline([{ id: 'm1', role: 'user', content, at: AT } as ConversationMessage], { segmenter: jiebaSegmenter });

describe('habits are standing (global) preferences', () => {
  it.each([
    'I usually write my build scripts in Make.',
    'I normally deploy on Tuesdays.',
    'I typically use SQLite for prototypes.',
    'We generally run Redis for caching.',
    'For dashboards I always reach for Grafana.',
    'When I write CLIs I usually go with Cobra.',
    'I tend to use tabs over spaces.',
    'Usually I answer emails right after lunch.',
    'Most mornings I journal before work.',
    'I almost always take notes by hand.',
    '写命令行工具我一般用 Rust。',
    '我做移动端都是用 Flutter。',
    '我通常晚上十点前睡觉。',
    '周会纪要我都是当天写完。',
    '我平时都用 Notion 做笔记。',
    '画图我习惯用 Figma。',
    '我写文档默认用 Markdown。',
    '出差我一般住全季。',
  ])('%s → a global preference', (say) => {
    const [c] = candidatesOf(say);
    expect(c, say).toBeDefined();
    expect(c).toMatchObject({ type: 'preference', scope: 'global', intent: 'assert' });
    expect(c!.confidence).toBeGreaterThanOrEqual(0.8);
    expect(c!.expiresAt).toBeUndefined();
  });

  it('tells a habit from "even" and "all of us"', () => {
    expect(isHabitual('我都不知道怎么办', 'zh')).toBe(false);
    expect(isHabitual('我们都很累', 'zh')).toBe(false);
    expect(isHabitual('我写接口都用 Rust', 'zh')).toBe(true);
    expect(isHabitual('I always use Vim', 'en')).toBe(true);
    expect(isHabitual('I used Vim once', 'en')).toBe(false);
  });

  it('keeps a one-time use a fact, and someone else\'s habit someone else\'s', () => {
    expect(candidatesOf('I use Terraform at work.')[0]).toMatchObject({ type: 'fact' });
    expect(candidatesOf('他一般用 Emacs 写代码。')).toEqual([]);
    expect(candidatesOf('我领导一般周五下午开会。')).toEqual([]);
    expect(candidatesOf('我表姐每天都要喝两杯奶茶。')).toEqual([]);
    expect(candidatesOf('She usually takes the bus.')).toEqual([]);
  });
});

describe('one-off requests stay scoped to their task', () => {
  it.each([
    'Do this one in Elixir.',
    'For the migration script, stick with Node.',
    "I'd like the export tool in Ruby.",
    'For this ticket, use Bash.',
    'Make the next answer shorter.',
    '这个爬虫用 Rust 写吧。',
    '今天这个报表用 Excel 做一下。',
    '就用 Kotlin 写吧。',
    '先用 Java 写一版。',
    '改用 Swift 写。',
    '帮我用 Lua 写个脚本。',
    '这次的周报用表格。',
  ])('%s → never a global memory', (say) => {
    expect(candidatesOf(say).filter((c) => c.scope === 'global')).toEqual([]);
  });

  it.each(['这个爬虫用 Rust 写吧。', '先用 Java 写一版。', 'For this ticket, use Bash.', 'For the migration script, stick with Node.'])(
    '%s → a task-scoped instruction that lapses after its task',
    (say) => {
      const [c] = candidatesOf(say);
      expect(c).toMatchObject({ type: 'instruction', scope: 'task' });
      expect(c!.importance).toBeLessThanOrEqual(0.5);
      expect(c!.expiresAt!.getTime() - AT.getTime()).toBe(TASK_SCOPE_DAYS * 86_400_000);
    },
  );

  it('keeps standing instructions and habits out of task scope', () => {
    for (const say of ['以后都用 Rust 写。', 'From now on, always use Bash for scripts.', '我平时写脚本都用 Lua。', 'I usually write scripts in Lua.', 'Next time, give me the code first.']) {
      expect(isTaskScoped(say), say).toBe(false);
      expect(candidatesOf(say)[0]?.scope, say).toBe('global');
    }
    // A passing time ("这个月") is not a task.
    expect(isTaskScoped('这个月我都用 Vim。')).toBe(false);
  });
});
