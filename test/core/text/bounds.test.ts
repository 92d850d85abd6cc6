import { describe, expect, it } from 'vitest';
import { splitSentences } from '../../../src/core/text/sentences';
import { boundMessage, cutAt, MAX_MESSAGE_CHARS, MAX_SENTENCE_CHARS, splitLongSentence, squeezeSpaces } from '../../../src/core/text/bounds';
import { parseReminderRequest } from '../../../src/core/time/reminder-request';

describe('text bounds', () => {
  it('leaves a normal sentence whole', () => {
    expect(splitLongSentence('我下周一要去上海出差。')).toEqual(['我下周一要去上海出差。']);
  });

  it('splits a run-on sentence into pieces at most MAX_SENTENCE_CHARS long, at a space when there is one', () => {
    const words = 'word '.repeat(700);
    const pieces = splitLongSentence(words);
    expect(pieces.join('')).toBe(words);
    expect(pieces.every((p) => p.length <= MAX_SENTENCE_CHARS)).toBe(true);
    expect(pieces.slice(0, -1).every((p) => p.endsWith(' '))).toBe(true);
  });

  it('never cuts a surrogate pair', () => {
    const emoji = '😀'.repeat(MAX_SENTENCE_CHARS);
    for (const piece of splitLongSentence(emoji)) expect(Array.from(piece).every((c) => c === '😀')).toBe(true);
    expect(cutAt('a😀', 2)).toBe('a');
    expect(boundMessage('x'.repeat(MAX_MESSAGE_CHARS + 5))).toHaveLength(MAX_MESSAGE_CHARS);
  });

  it('splitSentences gives the rules bounded sentences with true offsets', () => {
    const content = `${'很长的句子'.repeat(500)}。短句。`;
    const sentences = splitSentences(content);
    expect(sentences.every((s) => s.text.length <= MAX_SENTENCE_CHARS)).toBe(true);
    for (const s of sentences) expect(content.slice(s.start, s.end)).toBe(s.text);
    expect(sentences.at(-1)?.text).toBe('短句');
  });
});

describe('reminder requests on long whitespace runs (issue #20)', () => {
  const said = new Date('2026-03-10T08:00:00Z');

  it('squeezeSpaces maps offsets back', () => {
    const s = squeezeSpaces('a   b \t c');
    expect(s.text).toBe('a b c');
    expect(s.original(2)).toBe(4);
    expect(s.original(4)).toBe(8);
  });

  it('a digit then thousands of spaces answers in well under a second (4.7 s on 1000 spaces before)', () => {
    parseReminderRequest('提醒我明天3点开会', { saidAt: said, timeZone: 'Asia/Shanghai' }); // loads chrono's parsers
    const started = performance.now();
    parseReminderRequest(`提醒我3${' '.repeat(3000)}x`, { saidAt: said, timeZone: 'Asia/Shanghai' });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('still reads dates separated by runs of spaces, with the task intact', () => {
    const request = parseReminderRequest('提醒我6月2日    下午3点   交房租', { saidAt: said, timeZone: 'Asia/Shanghai' });
    expect(request?.text).toBe('交房租');
    expect(request?.dueAt.toISOString()).toBe('2026-06-02T07:00:00.000Z');
  });
});

describe('query dates on long whitespace runs (issue #20)', () => {
  it('read a date across a run of spaces, with its text, and a digit then thousands of spaces quickly', async () => {
    const { parseQueryDates } = await import('../../../src/core/time/query-dates');
    const now = new Date('2026-03-10T08:00:00Z');
    const found = parseQueryDates('what did we say on March    3rd', { now, timeZone: 'UTC' });
    expect(found.map((d) => d.text)).toEqual(['March    3rd']);
    parseQueryDates('昨天', { now, timeZone: 'UTC' });
    const started = performance.now();
    parseQueryDates(`3${' '.repeat(4000)}x`, { now, timeZone: 'UTC' });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('goal deadlines on long whitespace runs (issue #20)', () => {
  it('a digit then thousands of spaces answers quickly (chrono took 12 minutes on 8000 chars), dates still read', async () => {
    const { goalDeadline } = await import('../../../src/core/proactive/nudge-triggers');
    const said = new Date('2026-03-10T08:00:00Z');
    expect(goalDeadline('by   December 15 finish the thesis', said, 'UTC')?.toISOString()).toBe('2026-12-15T23:59:59.999Z');
    const started = performance.now();
    goalDeadline(`提醒我3${' '.repeat(3000)}x`, said, 'Asia/Shanghai');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
