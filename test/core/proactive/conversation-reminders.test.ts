import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { detectReminderRequests } from '../../../src/core/proactive/conversation-reminders';

// Wednesday 10 June 2026, 10:00 in Shanghai: every expectation is local wall-clock time there.
const SAID = new Date('2026-06-10T10:00:00+08:00');
const ZONE = 'Asia/Shanghai';

const CASES: [message: string, text: string, localDue: string, extra?: { rrule?: string; assumedTime?: boolean }][] = [
  ['提醒我明天下午三点开会', '开会', '2026-06-11 15:00', { assumedTime: false }],
  ['下周五上午提醒我交报告', '交报告', '2026-06-19 09:00', { assumedTime: true }],
  ['两小时后提醒我喝水', '喝水', '2026-06-10 12:00'],
  ['每天早上8点提醒我吃药', '吃药', '2026-06-11 08:00', { rrule: 'FREQ=DAILY;BYHOUR=8;BYMINUTE=0' }],
  ['明早提醒我给妈妈打电话', '给妈妈打电话', '2026-06-11 08:00', { assumedTime: true }],
  ['后天晚上7点半提醒我看球赛', '看球赛', '2026-06-12 19:30'],
  ['6月15日提醒我交房租', '交房租', '2026-06-15 09:00', { assumedTime: true }],
  ['remind me on Friday at 9 to call mom', 'call mom', '2026-06-12 09:00', { assumedTime: false }],
  ['Remind me tomorrow at 3pm to send the invoice', 'send the invoice', '2026-06-11 15:00'],
  ['remind me in 30 minutes to stretch', 'stretch', '2026-06-10 10:30'],
  ['Please remind me every Monday at 9am to water the plants', 'water the plants', '2026-06-15 09:00', { rrule: 'FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0' }],
  ['remind me tonight to take out the trash', 'take out the trash', '2026-06-10 20:00', { assumedTime: true }],
];

const local = (iso: string) => DateTime.fromISO(iso, { zone: ZONE }).toFormat('yyyy-MM-dd HH:mm');

describe('detectReminderRequests: explicit reminder requests in a conversation', () => {
  it.each(CASES)('%s → %s at %s', (message, text, due, extra) => {
    const [found, ...rest] = detectReminderRequests([{ id: 'm1', role: 'user', content: message, at: SAID }], ZONE);
    expect(rest).toHaveLength(0);
    expect(found).toBeDefined();
    expect(found!.text).toBe(text);
    expect(local(found!.dueAt)).toBe(due);
    expect(found!.messageId).toBe('m1');
    expect(found!.timeZone).toBe(ZONE);
    if (extra?.rrule) expect(found!.rrule).toBe(extra.rrule);
    else expect(found!.rrule).toBeUndefined();
    if (extra?.assumedTime !== undefined) expect(found!.assumedTime).toBe(extra.assumedTime);
  });

  it('resolves against each message’s own time and the user’s zone, not the processing time', () => {
    const [ny] = detectReminderRequests([{ id: 'm1', role: 'user', content: 'remind me tomorrow at 3pm to send the invoice', at: new Date('2026-11-30T23:30:00-05:00') }], 'America/New_York');
    expect(DateTime.fromISO(ny!.dueAt, { zone: 'America/New_York' }).toFormat('yyyy-MM-dd HH:mm')).toBe('2026-12-01 15:00');
    expect(ny!.saidAt).toBe('2026-12-01T04:30:00.000Z');
  });

  it('ignores assistant messages, negations, third parties and chit-chat', () => {
    const found = detectReminderRequests(
      [
        { id: 'a', role: 'assistant', content: '好的，我会提醒你明天下午三点开会', at: SAID },
        { id: 'b', role: 'user', content: '别提醒我开会', at: SAID },
        { id: 'c', role: 'user', content: '老板提醒我明天开会', at: SAID },
        { id: 'd', role: 'user', content: '我今天很开心', at: SAID },
        { id: 'e', role: 'user', content: "don't remind me about the meeting tomorrow", at: SAID },
      ],
      ZONE,
    );
    expect(found).toEqual([]);
  });
});
