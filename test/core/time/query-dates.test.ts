import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  chronoLocalesFor,
  parseChineseNumber,
  parseQueryDates,
  refersToSharedPast,
  type DateRange,
} from '../../../src/core/time/query-dates';

const SH = 'Asia/Shanghai';
const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';

/** Thursday 2026-06-11 10:00 in Shanghai; the same instant is Wednesday 2026-06-10 22:00 in New York. */
const NOW = new Date('2026-06-11T02:00:00Z');

function parse(query: string, timeZone = SH, now = NOW): DateRange[] {
  return parseQueryDates(query, { now, timeZone });
}

function only(query: string, timeZone = SH, now = NOW): DateRange {
  const ranges = parse(query, timeZone, now);
  expect(ranges, `ranges for "${query}"`).toHaveLength(1);
  return ranges[0] as DateRange;
}

/** Local midnight of an ISO date in a zone, as an instant. */
function midnight(isoDate: string, zone: string): Date {
  return DateTime.fromISO(isoDate, { zone }).startOf('day').toJSDate();
}

/** Asserts the single range of `query` is the whole local day `isoDate`. */
function expectDay(query: string, isoDate: string, timeZone = SH, now = NOW): DateRange {
  const range = only(query, timeZone, now);
  expect(range.granularity).toBe('day');
  expect(range.start.toISOString()).toBe(midnight(isoDate, timeZone).toISOString());
  expect(range.end.toISOString()).toBe(midnight(DateTime.fromISO(isoDate).plus({ days: 1 }).toISODate() ?? '', timeZone).toISOString());
  return range;
}

function expectSpan(query: string, granularity: DateRange['granularity'], from: string, to: string, timeZone = SH, now = NOW): void {
  const range = only(query, timeZone, now);
  expect(range.granularity).toBe(granularity);
  expect(range.start.toISOString()).toBe(midnight(from, timeZone).toISOString());
  expect(range.end.toISOString()).toBe(midnight(to, timeZone).toISOString());
}

describe('parseQueryDates — Chinese, Asia/Shanghai (now = Thu 2026-06-11 10:00)', () => {
  it('month-day with 日 / 号 / 那天, as whole local days', () => {
    const r = expectDay('5月2日我们聊了什么', '2026-05-02');
    expect(r.text).toBe('5月2日');
    // Exact instants once, so the helper is not the only oracle: Shanghai is UTC+8.
    expect(r.start.toISOString()).toBe('2026-05-01T16:00:00.000Z');
    expect(r.end.toISOString()).toBe('2026-05-02T16:00:00.000Z');
    expectDay('5月2号', '2026-05-02');
    expect(expectDay('6月2号那天你推荐的书', '2026-06-02').text).toBe('6月2号');
    expectDay('六月二号', '2026-06-02');
  });

  it('explicit year', () => {
    expectDay('2026年6月2日', '2026-06-02');
    expectDay('2027年1月5日的计划', '2027-01-05'); // an explicit year is kept even in the future
  });

  it('a month-day without year is the most recent one not after today', () => {
    expectDay('12月31日', '2025-12-31');
    expectDay('6月11日', '2026-06-11'); // today itself
    expectDay('6月12日', '2025-06-12'); // tomorrow's date → last year
    expectDay('2024年2月29日', '2024-02-29');
  });

  it('上周三 is Wednesday of the previous ISO week; 这周一 Monday of this week', () => {
    expectDay('上周三', '2026-06-03');
    expectDay('上星期三', '2026-06-03');
    expectDay('这周一', '2026-06-08');
    expectDay('本周五', '2026-06-12'); // this week's Friday, even though it is ahead
  });

  it('上周日 is the Sunday before this Monday (Monday-start week, unlike chrono)', () => {
    expectDay('上周日', '2026-06-07');
    expectDay('上礼拜天', '2026-06-07');
  });

  it('a bare weekday is the most recent one on or before today', () => {
    expectDay('周五', '2026-06-05');
    expectDay('星期四', '2026-06-11'); // today is Thursday
    expectDay('礼拜三', '2026-06-10');
  });

  it('day words', () => {
    expectDay('昨天', '2026-06-10');
    expectDay('前天', '2026-06-09');
    expectDay('今天', '2026-06-11');
    expectDay('大前天', '2026-06-08');
    expectDay('昨晚说的', '2026-06-10');
    expectDay('明天', '2026-06-12');
    expectDay('后天', '2026-06-13');
  });

  it('N天前 is a day; 两周前 is the ISO week containing the day 14 days ago', () => {
    expectDay('三天前', '2026-06-08');
    expectDay('3天前', '2026-06-08');
    expectDay('十天前', '2026-06-01');
    expectSpan('两周前', 'week', '2026-05-25', '2026-06-01');
    expectSpan('两个星期前', 'week', '2026-05-25', '2026-06-01');
    expectSpan('3个月前', 'month', '2026-03-01', '2026-04-01');
  });

  it('上周 / 上上周 / 这周 / 上个月 / 这个月', () => {
    expectSpan('上周', 'week', '2026-06-01', '2026-06-08');
    expectSpan('上个星期', 'week', '2026-06-01', '2026-06-08');
    expectSpan('上上周', 'week', '2026-05-25', '2026-06-01');
    expectSpan('这周', 'week', '2026-06-08', '2026-06-15');
    expectSpan('上个月', 'month', '2026-05-01', '2026-06-01');
    expectSpan('本月', 'month', '2026-06-01', '2026-07-01');
  });

  it('"这一周一直在忙" is this week, not a Monday', () => {
    expectSpan('这一周一直在忙', 'week', '2026-06-08', '2026-06-15');
  });

  it('weekends, fuzzy days, rolling windows and years', () => {
    expectSpan('上周末', 'range', '2026-06-06', '2026-06-08');
    expectSpan('周末去了哪', 'range', '2026-06-06', '2026-06-08'); // the last weekend that started
    expectSpan('前几天', 'range', '2026-06-04', '2026-06-11');
    expectSpan('最近一周', 'range', '2026-06-05', '2026-06-12');
    expectSpan('去年', 'range', '2025-01-01', '2026-01-01');
  });

  it('months: 5月份, 去年5月, 上个月3号, 2026年6月', () => {
    expectSpan('5月份', 'month', '2026-05-01', '2026-06-01');
    expectSpan('7月', 'month', '2025-07-01', '2025-08-01'); // July has not started yet this year
    expectSpan('去年5月', 'month', '2025-05-01', '2025-06-01');
    expectDay('上个月3号', '2026-05-03');
    expectSpan('2026年6月', 'month', '2026-06-01', '2026-07-01');
  });

  it('date ranges', () => {
    expectSpan('5月2日到5月5日', 'range', '2026-05-02', '2026-05-06');
  });

  it('finds dates inside a sentence, in order, with the matched text', () => {
    const ranges = parse('你还记得昨天和5月2日我说的那家餐厅吗');
    expect(ranges.map((r) => r.text)).toEqual(['昨天', '5月2日']);
    expect(ranges[0]?.start.toISOString()).toBe(midnight('2026-06-10', SH).toISOString());
    expect(only('上周三我们聊的那本书叫什么').text).toBe('上周三');
  });

  it('full-width digits are understood and the original text is returned', () => {
    const r = expectDay('５月２日', '2026-05-02');
    expect(r.text).toBe('５月２日');
  });
});

describe('parseQueryDates — English', () => {
  it('last <weekday> is the most recent one strictly before today', () => {
    expectDay('what did you recommend last Tuesday', '2026-06-09'); // Thursday → two days ago
    // Said on a Tuesday: a week ago, not today.
    expectDay('last Tuesday', '2026-06-02', SH, new Date('2026-06-09T02:00:00Z'));
    // Said on a Monday: the Tuesday of the previous week.
    expectDay('last Tuesday', '2026-06-02', SH, new Date('2026-06-08T02:00:00Z'));
  });

  it('this / next / bare / "<weekday> last week"', () => {
    expectDay('this Monday', '2026-06-08');
    expectDay('next Monday', '2026-06-15');
    expectDay('on Friday', '2026-06-05');
    expectDay('Tuesday last week', '2026-06-02');
  });

  it('day words and N days ago (via chrono, re-anchored in the user zone)', () => {
    expectDay('yesterday', '2026-06-10');
    expectDay('the day before yesterday', '2026-06-09');
    expectDay('3 days ago', '2026-06-08');
    expectDay('I mentioned it three days ago', '2026-06-08');
    expectDay('this morning', '2026-06-11');
  });

  it('absolute dates', () => {
    expect(expectDay('on May 2nd', '2026-05-02').text).toBe('May 2nd');
    expectDay('May 2', '2026-05-02');
    expectDay('2 June', '2026-06-02');
    expectDay('2026-06-02', '2026-06-02');
    expectDay('June 2nd, 2025', '2025-06-02');
    expectDay('December 31', '2025-12-31');
  });

  it('weeks and months', () => {
    expectSpan('two weeks ago', 'week', '2026-05-25', '2026-06-01');
    expectSpan('a week ago', 'week', '2026-06-01', '2026-06-08');
    expectSpan('last week', 'week', '2026-06-01', '2026-06-08');
    expectSpan('the week before last', 'week', '2026-05-25', '2026-06-01');
    expectSpan('last month', 'month', '2026-05-01', '2026-06-01');
    expectSpan('2 months ago', 'month', '2026-04-01', '2026-05-01');
    expectSpan('in May', 'month', '2026-05-01', '2026-06-01');
  });

  it('fuzzy and rolling windows, weekends, ranges', () => {
    expectSpan('a few days ago', 'range', '2026-06-04', '2026-06-11');
    expectSpan('the other day', 'range', '2026-06-04', '2026-06-11');
    expectSpan('in the past week', 'range', '2026-06-05', '2026-06-12');
    expectSpan('last weekend', 'range', '2026-06-06', '2026-06-08');
    expectSpan('May 2-5', 'range', '2026-05-02', '2026-05-06');
  });
});

describe('parseQueryDates — other zones', () => {
  it('America/New_York: the same instant is still Wednesday 2026-06-10', () => {
    const r = expectDay('今天', '2026-06-10', NY);
    expect(r.start.toISOString()).toBe('2026-06-10T04:00:00.000Z'); // EDT, UTC−4
    expectDay('yesterday', '2026-06-09', NY);
    expectDay('昨天', '2026-06-09', NY);
    expectDay('last Tuesday', '2026-06-09', NY); // Wednesday → yesterday
    expectDay('周五', '2026-06-05', NY);
    expectDay('5月2日', '2026-05-02', NY);
    expectSpan('上周', 'week', '2026-06-01', '2026-06-08', NY);
  });

  it('Europe/Berlin DST week: 上周 spans the spring-forward Sunday (167 hours)', () => {
    const now = new Date('2026-04-01T08:00:00Z'); // Wed 2026-04-01 10:00 CEST
    const week = only('上周', BERLIN, now);
    expect(week.granularity).toBe('week');
    expect(week.start.toISOString()).toBe('2026-03-22T23:00:00.000Z'); // Mon 03-23 00:00 CET
    expect(week.end.toISOString()).toBe('2026-03-29T22:00:00.000Z'); // Mon 03-30 00:00 CEST
    expect(week.end.getTime() - week.start.getTime()).toBe(167 * 3_600_000);

    for (const q of ['上周日', 'last Sunday', '三天前']) {
      const day = only(q, BERLIN, now);
      expect(day.start.toISOString(), q).toBe('2026-03-28T23:00:00.000Z');
      expect(day.end.toISOString(), q).toBe('2026-03-29T22:00:00.000Z'); // a 23-hour day
    }
  });

  it('Europe/Berlin fall-back Sunday is a 25-hour day', () => {
    const now = new Date('2026-10-26T09:00:00Z'); // Mon 10:00 CET
    const day = only('yesterday', BERLIN, now);
    expect(day.start.toISOString()).toBe('2026-10-24T22:00:00.000Z');
    expect(day.end.toISOString()).toBe('2026-10-25T23:00:00.000Z');
  });

  it('America/New_York spring-forward day', () => {
    const now = new Date('2026-03-09T14:00:00Z'); // Mon 10:00 EDT
    const day = only('昨天', NY, now);
    expect(day.start.toISOString()).toBe('2026-03-08T05:00:00.000Z');
    expect(day.end.toISOString()).toBe('2026-03-09T04:00:00.000Z');
  });

  it('on a Sunday, 这周一 is six days back and 周日 is today', () => {
    const sunday = new Date('2026-06-14T02:00:00Z'); // Sun 10:00 Shanghai
    expectDay('这周一', '2026-06-08', SH, sunday);
    expectDay('周日', '2026-06-14', SH, sunday);
    expectDay('上周日', '2026-06-07', SH, sunday);
    expectDay('last Sunday', '2026-06-07', SH, sunday);
    expectDay('this Sunday', '2026-06-14', SH, sunday);
  });

  it('rejects an invalid zone', () => {
    expect(() => parseQueryDates('昨天', { now: NOW, timeZone: 'Mars/Olympus' })).toThrow(RangeError);
  });
});

describe('parseQueryDates — no false positives', () => {
  it.each([
    'payment-svc 9点超时',
    'P99 降到 50ms',
    '3 books',
    "I'm 30",
    'she sat down',
    '3/4 of the team agreed',
    'on call 24/7',
    'May I ask a question',
    '一周三次',
    '每周一开会',
    '这周围有什么好吃的',
    '我喜欢喝咖啡',
    'what is my favourite colour',
    '下午3点的会',
  ])('%s → []', (query) => {
    expect(parse(query)).toEqual([]);
  });
});

describe('refersToSharedPast', () => {
  it.each([
    '你之前推荐的那本书叫什么',
    '上次我们聊到哪了',
    '6月2号那天我说了什么',
    '记得吗，我对花生过敏',
    '你还记得我女儿的名字吗',
    '我跟你说过我要去东京',
    'you told me about a restaurant',
    'I mentioned my sister last week',
    'last time we talked about Rust',
    'did I take my medicine yesterday',
    'what did you recommend for the trip',
    'do you remember my cat',
  ])('%s → true', (query) => {
    expect(refersToSharedPast(query)).toBe(true);
  });

  it.each(['今天天气怎么样', '那天气真好', 'how is the weather', '帮我写一封邮件', 'what is TypeScript'])(
    '%s → false',
    (query) => {
      expect(refersToSharedPast(query)).toBe(false);
    },
  );
});

describe('parseChineseNumber', () => {
  it.each([
    ['3', 3],
    ['十', 10],
    ['十二', 12],
    ['二十五', 25],
    ['两', 2],
    ['零五', 5],
    ['一百零五', 105],
  ] as const)('%s → %d', (text, value) => {
    expect(parseChineseNumber(text)).toBe(value);
  });

  it('rejects non-numbers', () => {
    expect(parseChineseNumber('几')).toBeUndefined();
    expect(parseChineseNumber('abc')).toBeUndefined();
  });
});

describe('chrono parsers left out by script', () => {
  // Pieces of date talk in every form chrono reads, and text it never should.
  const HAN = ['今天', '明天', '昨天', '前天', '大后天', '上周三', '这个星期五', '礼拜天', '三天前', '两周后', '半个月内', '上午', '下午', '晚上', '凌晨', '点', '半', '月', '年', '号', '日', '现在', '立刻', '從', '到', '至', '个', '小时', '分钟', '之后', '以内', '早上', '十二', '〇', '两', '幾', '星期', '週', '去年'];
  const LATIN = ['today', 'tomorrow', 'yesterday', 'now', 'tonight', 'last', 'next', 'this', 'week', 'month', 'year', 'ago', 'in', 'on', 'at', 'May', 'June', 'Monday', 'Fri', 'am', 'PM', 'noon', 'midnight', 'morning', 'evening', 'sat', 'days', 'hours', 'later', 'before', 'after', 'the', 'of', 'café', 'über', 'Ｍａｙ', 'Ⅻ', 'T', 'Z', 'a.m.', 'P.M.'];
  const DIGITS = ['10', '3', '2026', '05', '10:30', '2026-05-02', '5/2', '12.25', '+08:00', '５', '٣'];
  const OTHER = [' ', ':', '：', '-', '/', '.', ',', '，', '～', '〜', '–', '~', '(', ')', '+', 'ひらがな', 'カタカナ', '한국어', 'завтра', 'العربية', '🙂', '\n'];
  let seed = 20261204;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 4294967296;
  };
  const text = (...pools: string[][]) => {
    const all = pools.flat();
    return Array.from({ length: 1 + Math.floor(random() * 8) }, () => all[Math.floor(random() * all.length)]!).join(random() < 0.5 ? ' ' : '');
  };
  const reference = new Date(2026, 5, 11, 10, 0, 0);

  it('leave out only a parser that finds nothing: zh without Han or digits, en without Latin letters or digits', () => {
    // How many of the texts were dates to the parser that did run: the pools reach real matches.
    let enFound = 0;
    let zhFound = 0;
    for (let i = 0; i < 3000; i++) {
      const latin = text(LATIN, OTHER);
      expect(chronoLocalesFor(latin).zh).toBe(false);
      expect(chrono.zh.casual.parse(latin, reference), latin).toEqual([]);
      if (chrono.en.casual.parse(latin, reference).length > 0) enFound++;
      const han = text(HAN, OTHER);
      expect(chronoLocalesFor(han).en).toBe(false);
      expect(chrono.en.casual.parse(han, reference), han).toEqual([]);
      if (chrono.zh.casual.parse(han, reference).length > 0) zhFound++;
      // With a digit both run, whatever else the text holds.
      expect(chronoLocalesFor(text(HAN, LATIN, OTHER) + DIGITS[i % DIGITS.length])).toEqual({ zh: true, en: true });
    }
    expect(enFound).toBeGreaterThan(500);
    expect(zhFound).toBeGreaterThan(500);
    // With a digit, a piece of either language is a date to the other parser too.
    expect(chrono.zh.casual.parse('10:30 PM', reference)).not.toEqual([]);
    expect(chrono.en.casual.parse('2026-05-02', reference)).not.toEqual([]);
    expect(chrono.en.casual.parse('tomorrow', reference)).not.toEqual([]);
    expect(chrono.zh.casual.parse('明天', reference)).not.toEqual([]);
  });

  it('find nothing in text of any other script, symbols and punctuation included', () => {
    // Random code points of the whole BMP, less the Han, Latin and digit ones either parser needs.
    const skippable = /[^\p{Script=Han}\p{Script=Latin}\p{Nd}\p{Cs}]/u;
    for (let i = 0; i < 1000; i++) {
      let text = '';
      while (text.length < 1 + (i % 12)) {
        const ch = String.fromCharCode(Math.floor(random() * 0x10000));
        if (skippable.test(ch)) text += ch;
      }
      expect(chronoLocalesFor(text)).toEqual({ zh: false, en: false });
      expect(chrono.zh.casual.parse(text, reference), JSON.stringify(text)).toEqual([]);
      expect(chrono.en.casual.parse(text, reference), JSON.stringify(text)).toEqual([]);
    }
  });

  it('still find dates in each language and in a mix of both', () => {
    expect(only('昨天我们聊了什么').granularity).toBe('day');
    expect(only('what did we talk about yesterday').granularity).toBe('day');
    expect(parse('5月2号 and May 3 我们聊过')).toHaveLength(2);
  });
});
