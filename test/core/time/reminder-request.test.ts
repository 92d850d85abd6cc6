import { describe, expect, it } from 'vitest';
import { parseReminderRequest, type ReminderRequest } from '../../../src/core/time/reminder-request';
import { validateRrule } from '../../../src/core/time/recurrence';

const SH = 'Asia/Shanghai';
const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';

/** Thursday 2026-06-11 10:00 in Shanghai (UTC+8). */
const SH_SAID = new Date('2026-06-11T02:00:00Z');
/** Thursday 2026-06-11 10:00 in New York (EDT, UTC−4). */
const NY_SAID = new Date('2026-06-11T14:00:00Z');

function parse(message: string, saidAt: Date, timeZone: string, defaultHour?: number): ReminderRequest {
  const r = parseReminderRequest(message, { saidAt, timeZone, ...(defaultHour !== undefined ? { defaultHour } : {}) });
  expect(r, `reminder for "${message}"`).toBeDefined();
  return r as ReminderRequest;
}

interface Case {
  message: string;
  due: string;
  text: string;
  assumed?: boolean;
  rrule?: string;
}

describe('parseReminderRequest — Chinese (said Thu 2026-06-11 10:00 Asia/Shanghai)', () => {
  it.each<Case>([
    { message: '提醒我明天下午三点开会', due: '2026-06-12T07:00:00.000Z', text: '开会' },
    // 上午 with no hour → 09:00, flagged as assumed; 下周五 = Friday of the next ISO week.
    { message: '下周五上午提醒我交报告', due: '2026-06-19T01:00:00.000Z', text: '交报告', assumed: true },
    { message: '明早8点叫我起床', due: '2026-06-12T00:00:00.000Z', text: '起床' },
    { message: '3天后提醒我续费', due: '2026-06-14T01:00:00.000Z', text: '续费', assumed: true },
    { message: '今晚9点提醒我吃药', due: '2026-06-11T13:00:00.000Z', text: '吃药' },
    { message: '提醒我十点半开会', due: '2026-06-11T02:30:00.000Z', text: '开会' }, // still ahead today
    { message: '两点一刻提醒我打电话', due: '2026-06-11T06:15:00.000Z', text: '打电话' }, // bare 2 o'clock → 14:15
    { message: '下午三点三刻提醒我取快递', due: '2026-06-11T07:45:00.000Z', text: '取快递' },
    { message: '提醒我周五晚上八点看电影', due: '2026-06-12T12:00:00.000Z', text: '看电影' },
    { message: '半小时后提醒我关火', due: '2026-06-11T02:30:00.000Z', text: '关火' },
    { message: '两个小时后提醒我收衣服', due: '2026-06-11T04:00:00.000Z', text: '收衣服' },
    { message: '提醒我周四下午提交周报', due: '2026-06-11T07:00:00.000Z', text: '提交周报', assumed: true }, // today, 15:00 ahead
    { message: '周四早上9点提醒我跑步', due: '2026-06-18T01:00:00.000Z', text: '跑步' }, // today's 09:00 has passed
    { message: '晚上12点提醒我睡觉', due: '2026-06-11T16:00:00.000Z', text: '睡觉' }, // midnight ending today
    { message: '凌晨两点提醒我看球赛', due: '2026-06-11T18:00:00.000Z', text: '看球赛' }, // 02:00 tomorrow
    { message: '15号提醒我还信用卡', due: '2026-06-15T01:00:00.000Z', text: '还信用卡', assumed: true },
    { message: '下个月3号提醒我交物业费', due: '2026-07-03T01:00:00.000Z', text: '交物业费', assumed: true },
    { message: '请在6月20日下午4点提醒我去机场', due: '2026-06-20T08:00:00.000Z', text: '去机场' },
    { message: '后天中午提醒我订餐', due: '2026-06-13T04:00:00.000Z', text: '订餐', assumed: true },
    { message: '开会的事明天下午三点提醒我', due: '2026-06-12T07:00:00.000Z', text: '开会' },
    { message: '记得明天提醒我一下带伞', due: '2026-06-12T01:00:00.000Z', text: '带伞', assumed: true },
    { message: '提醒我下周一早上去银行', due: '2026-06-15T00:00:00.000Z', text: '去银行', assumed: true }, // 早上 → 08:00
    { message: '提醒我明天不要叫外卖', due: '2026-06-12T01:00:00.000Z', text: '不要叫外卖', assumed: true },
    { message: '１０分钟后提醒我出门', due: '2026-06-11T02:10:00.000Z', text: '出门' }, // full-width digits
  ])('$message', ({ message, due, text, assumed = false }) => {
    const r = parse(message, SH_SAID, SH);
    expect(r.dueAt.toISOString()).toBe(due);
    expect(r.text).toBe(text);
    expect(r.assumedTime).toBe(assumed);
    expect(r.timeZone).toBe(SH);
    expect(r.rrule).toBeUndefined();
  });

  it.each<Case>([
    { message: '每天早上8点提醒我喝水', rrule: 'FREQ=DAILY;BYHOUR=8;BYMINUTE=0', due: '2026-06-12T00:00:00.000Z', text: '喝水' },
    {
      message: '每周一上午10点提醒我开周会',
      rrule: 'FREQ=WEEKLY;BYDAY=MO;BYHOUR=10;BYMINUTE=0',
      due: '2026-06-15T02:00:00.000Z',
      text: '开周会',
    },
    { message: '每晚10点提醒我刷牙', rrule: 'FREQ=DAILY;BYHOUR=22;BYMINUTE=0', due: '2026-06-11T14:00:00.000Z', text: '刷牙' },
    {
      message: '每个工作日早上9点提醒我打卡',
      rrule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0',
      due: '2026-06-12T01:00:00.000Z',
      text: '打卡',
    },
    {
      message: '每月1号提醒我交房租',
      rrule: 'FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0',
      due: '2026-07-01T01:00:00.000Z',
      text: '交房租',
      assumed: true,
    },
  ])('recurring: $message', ({ message, rrule, due, text, assumed = false }) => {
    const r = parse(message, SH_SAID, SH);
    expect(r.rrule).toBe(rrule);
    expect(r.dueAt.toISOString()).toBe(due);
    expect(r.text).toBe(text);
    expect(r.assumedTime).toBe(assumed);
    expect(validateRrule(r.rrule ?? '')).toEqual({ ok: true });
  });

  it('reports the matched span', () => {
    expect(parse('好的，提醒我明天下午三点开会', SH_SAID, SH).matched).toBe('提醒我明天下午三点');
    expect(parse('每天早上8点提醒我喝水', SH_SAID, SH).matched).toBe('每天早上8点提醒我');
  });

  it('uses defaultHour when no time of day is given', () => {
    const r = parse('3天后提醒我续费', SH_SAID, SH, 10);
    expect(r.dueAt.toISOString()).toBe('2026-06-14T02:00:00.000Z');
    expect(r.assumedTime).toBe(true);
    expect(() => parseReminderRequest('3天后提醒我续费', { saidAt: SH_SAID, timeZone: SH, defaultHour: 24 })).toThrow(RangeError);
  });
});

describe('parseReminderRequest — English (said Thu 2026-06-11 10:00 America/New_York)', () => {
  it.each<Case>([
    { message: 'remind me on Friday at 9 to call mom', due: '2026-06-12T13:00:00.000Z', text: 'call mom' },
    { message: 'remind me tomorrow at 3pm to submit the report', due: '2026-06-12T19:00:00.000Z', text: 'submit the report' },
    { message: 'remind me in 2 hours to stretch', due: '2026-06-11T16:00:00.000Z', text: 'stretch' },
    // No time → 09:00 and assumedTime; "next Monday" = Monday of the next ISO week.
    { message: 'remind me next Monday to pay rent', due: '2026-06-15T13:00:00.000Z', text: 'pay rent', assumed: true },
    { message: 'remind me at 10:30 tonight to take medicine', due: '2026-06-12T02:30:00.000Z', text: 'take medicine' },
    { message: 'Remind me tomorrow at 3 p.m. to call the bank.', due: '2026-06-12T19:00:00.000Z', text: 'call the bank' },
    { message: 'remind me on June 15 at 5pm to renew my passport', due: '2026-06-15T21:00:00.000Z', text: 'renew my passport' },
    { message: 'can you remind me in 45 minutes to check the oven?', due: '2026-06-11T14:45:00.000Z', text: 'check the oven' },
    { message: 'please remind me in half an hour to move the car', due: '2026-06-11T14:30:00.000Z', text: 'move the car' },
    { message: 'remind me to water the plants tomorrow morning', due: '2026-06-12T13:00:00.000Z', text: 'water the plants', assumed: true },
    { message: 'remind me on Thursday at 11am to join the standup', due: '2026-06-11T15:00:00.000Z', text: 'join the standup' }, // today, ahead
    { message: 'remind me on Thursday at 9am to run', due: '2026-06-18T13:00:00.000Z', text: 'run' }, // today's 9am passed
    { message: 'remind me at 3 to pick up the kids', due: '2026-06-11T19:00:00.000Z', text: 'pick up the kids' }, // bare 3 → 15:00
    { message: 'wake me up at 6:30 tomorrow', due: '2026-06-12T10:30:00.000Z', text: 'wake up' },
    { message: 'remind me the day after tomorrow to book flights', due: '2026-06-13T13:00:00.000Z', text: 'book flights', assumed: true },
  ])('$message', ({ message, due, text, assumed = false }) => {
    const r = parse(message, NY_SAID, NY);
    expect(r.dueAt.toISOString()).toBe(due);
    expect(r.text).toBe(text);
    expect(r.assumedTime).toBe(assumed);
  });

  it('"Friday" said on a Friday morning is today when the time is still ahead', () => {
    const fridayMorning = new Date('2026-06-12T12:00:00Z'); // Fri 08:00 EDT
    const r = parse('remind me Friday to send the invoice', fridayMorning, NY);
    expect(r.dueAt.toISOString()).toBe('2026-06-12T13:00:00.000Z');
    const late = parse('remind me Friday to send the invoice', new Date('2026-06-12T14:00:00Z'), NY); // Fri 10:00
    expect(late.dueAt.toISOString()).toBe('2026-06-19T13:00:00.000Z');
  });

  it.each<Case>([
    { message: 'every day at 8am remind me to drink water', rrule: 'FREQ=DAILY;BYHOUR=8;BYMINUTE=0', due: '2026-06-12T12:00:00.000Z', text: 'drink water' },
    {
      message: 'every Monday at 9 remind me to plan the week',
      rrule: 'FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0',
      due: '2026-06-15T13:00:00.000Z',
      text: 'plan the week',
    },
    {
      message: 'every Monday and Wednesday at 7pm remind me to go to the gym',
      rrule: 'FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=19;BYMINUTE=0',
      due: '2026-06-15T23:00:00.000Z',
      text: 'go to the gym',
    },
    { message: 'remind me to take vitamins every morning', rrule: 'FREQ=DAILY;BYHOUR=9;BYMINUTE=0', due: '2026-06-12T13:00:00.000Z', text: 'take vitamins', assumed: true },
  ])('recurring: $message', ({ message, rrule, due, text, assumed = false }) => {
    const r = parse(message, NY_SAID, NY);
    expect(r.rrule).toBe(rrule);
    expect(r.dueAt.toISOString()).toBe(due);
    expect(r.text).toBe(text);
    expect(r.assumedTime).toBe(assumed);
  });
});

describe('parseReminderRequest — DST', () => {
  it('"tomorrow at 9" across the Europe/Berlin spring-forward is 09:00 CEST', () => {
    const saturdayNoon = new Date('2026-03-28T11:00:00Z'); // Sat 12:00 CET
    expect(parse('remind me tomorrow at 9 to call mom', saturdayNoon, BERLIN).dueAt.toISOString()).toBe('2026-03-29T07:00:00.000Z');
    expect(parse('明天早上9点提醒我给妈妈打电话', saturdayNoon, BERLIN).dueAt.toISOString()).toBe('2026-03-29T07:00:00.000Z');
  });

  it('"tomorrow at 9" across the America/New_York spring-forward is 09:00 EDT', () => {
    const saturdayNoon = new Date('2026-03-07T17:00:00Z'); // Sat 12:00 EST
    expect(parse('remind me tomorrow at 9 to call mom', saturdayNoon, NY).dueAt.toISOString()).toBe('2026-03-08T13:00:00.000Z');
  });

  it('"明天上午9点" across the Europe/Berlin fall-back is 09:00 CET', () => {
    const saturdayNoon = new Date('2026-10-24T10:00:00Z'); // Sat 12:00 CEST
    expect(parse('明天上午9点提醒我开会', saturdayNoon, BERLIN).dueAt.toISOString()).toBe('2026-10-25T08:00:00.000Z');
  });

  it('a wall time that occurs twice means its first instance', () => {
    const saturdayNoon = new Date('2026-10-24T10:00:00Z');
    // 02:30 on 2026-10-25 happens at 00:30Z (CEST) and again at 01:30Z (CET).
    expect(parse('明天凌晨两点半提醒我看流星', saturdayNoon, BERLIN).dueAt.toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });

  it('durations are exact across DST (2 hours is 2 hours, not 2 wall-clock hours)', () => {
    const beforeSwitch = new Date('2026-03-29T00:30:00Z'); // 01:30 CET, the clocks jump at 02:00
    expect(parse('remind me in 2 hours to check the oven', beforeSwitch, BERLIN).dueAt.toISOString()).toBe('2026-03-29T02:30:00.000Z');
  });

  it('a daily 08:00 reminder set before the switch first fires at 08:00 CEST', () => {
    const saturdayNoon = new Date('2026-03-28T11:00:00Z');
    const r = parse('每天早上8点提醒我喝水', saturdayNoon, BERLIN);
    expect(r.dueAt.toISOString()).toBe('2026-03-29T06:00:00.000Z');
  });
});

describe('parseReminderRequest — not a reminder request', () => {
  it.each([
    '我明天下午三点开会', // a statement about an event, no 提醒我
    "don't remind me",
    "Don't remind me about the meeting tomorrow at 9",
    '你提醒过我的事',
    '你之前提醒我的那件事办了吗',
    '别提醒我明天开会了',
    '不用提醒我明天开会',
    '明天不要叫我起床',
    '老板提醒我明天下午三点开会', // someone else reminded the user
    'remind me what I said yesterday', // a recall question
    'remind me of my mother',
    'Did you remind me to call mom tomorrow?',
    'He will remind me tomorrow at 9',
    'I have a meeting tomorrow at 3pm',
    '提醒我喝水', // no time at all: the caller should ask when
    '提醒我多喝一点水', // 一点 = "a bit", not 01:00
    'stop reminding me at 9',
  ])('%s → undefined', (message) => {
    expect(parseReminderRequest(message, { saidAt: SH_SAID, timeZone: SH })).toBeUndefined();
  });

  it('rejects an invalid zone', () => {
    expect(() => parseReminderRequest('提醒我明天开会', { saidAt: SH_SAID, timeZone: 'Nowhere/City' })).toThrow(RangeError);
  });
});
