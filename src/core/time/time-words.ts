/**
 * Time words shared by the date parsers of recall queries (query-dates.ts) and reminder requests
 * (reminder-request.ts): small numbers and weekdays in Chinese and English, full-width folding,
 * the user's zone, chrono's floating reference, and blanking what one parser has read.
 */
import { DateTime } from 'luxon';

/** Regex source for a small cardinal number in Arabic or Chinese digits ("12", "十二", "两"). */
export const ZH_NUMBER_SOURCE = '(?:\\d{1,3}|[零〇一二两三四五六七八九十百]{1,4})';

const ZH_DIGITS: Readonly<Record<string, number>> = {
  零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9,
};

/**
 * Parses a small cardinal written in Arabic digits or Chinese numerals: "3", "十" (10), "十二",
 * "二十五", "一百零五", "两", "零五" (5). Undefined for anything else.
 */
export function parseChineseNumber(text: string): number | undefined {
  const s = text.trim();
  if (/^\d+$/u.test(s)) return Number.parseInt(s, 10);
  if (!/^[零〇一二两三四五六七八九十百]+$/u.test(s)) return undefined;
  let total = 0;
  let digit: number | undefined;
  for (const ch of s) {
    if (ch === '百') {
      total += (digit ?? 1) * 100;
      digit = undefined;
    } else if (ch === '十') {
      total += (digit ?? 1) * 10;
      digit = undefined;
    } else {
      const d = ZH_DIGITS[ch];
      if (d === undefined) return undefined;
      // "二〇二六" style digit strings: a digit right after a digit shifts the previous one.
      digit = digit === undefined ? d : digit * 10 + d;
    }
  }
  return total + (digit ?? 0);
}

/**
 * Folds full-width ASCII ("１２月", "ｍａｙ") and the ideographic space to plain ASCII. Strictly
 * one code unit to one code unit, so match indices still point into the original text.
 */
export function normaliseWidth(text: string): string {
  return text.replace(/[\uFF01-\uFF5E\u3000]/gu, (ch) =>
    ch === '\u3000' ? ' ' : String.fromCharCode(ch.charCodeAt(0) - 0xfee0),
  );
}

/**
 * `at` as a luxon DateTime in `timeZone`.
 * @throws RangeError when `timeZone` is not a valid IANA zone (silently using UTC would shift
 * every "today" for the user).
 */
export function inZone(at: Date, timeZone: string): DateTime {
  const dt = DateTime.fromJSDate(at, { zone: timeZone });
  if (!dt.isValid) throw new RangeError(`Invalid IANA time zone: ${timeZone}`);
  return dt;
}

/**
 * A Date whose *host-local* fields equal the wall clock of `dt`. chrono computes relative words
 * ("昨天", "tomorrow") from host-local fields, and its zh parsers ignore a reference time zone, so
 * this is the one way to make chrono count days in the user's zone. Only calendar components of
 * chrono results may be used afterwards, never their instants. (In the rare hour where the
 * wall clock does not exist in the host's zone the reference shifts by that hour; day-level
 * results are unaffected.)
 */
export function floatingReference(dt: DateTime): Date {
  return new Date(dt.year, dt.month - 1, dt.day, dt.hour, dt.minute, dt.second);
}

/** Chinese weekday characters → ISO weekday (Monday = 1 … Sunday = 7). */
export const ZH_WEEKDAY: Readonly<Record<string, number>> = {
  一: 1, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6, 日: 7, 天: 7,
};

/** English weekday names → ISO weekday (Monday = 1 … Sunday = 7). */
export const EN_WEEKDAY: Readonly<Record<string, number>> = {
  monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6, sunday: 7,
};

/** Regex source for a Chinese weekday character; "一" must not start 一直/一起/一样… ("这周一直在忙"). */
export const ZH_WEEKDAY_CHAR_SOURCE = '(?:一(?![直起样般些共切定次])|[二三四五六日天])';

/** English number words used in "two weeks ago", "in three hours". */
export const EN_NUMBER: Readonly<Record<string, number>> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9,
  ten: 10, eleven: 11, twelve: 12, fifteen: 15, twenty: 20, thirty: 30, forty: 40, fifty: 50,
  sixty: 60, 'a couple of': 2, 'couple of': 2, 'a couple': 2,
};

/** Regex source matching a number in digits or an {@link EN_NUMBER} word. */
export const EN_NUMBER_SOURCE =
  '(\\d+|a couple of|couple of|a couple|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty)';

/** Parses digits or an {@link EN_NUMBER} word (case-insensitive). */
export function parseEnglishNumber(text: string): number | undefined {
  const s = text.trim().toLowerCase().replace(/\s+/gu, ' ');
  if (/^\d+$/u.test(s)) return Number.parseInt(s, 10);
  return EN_NUMBER[s];
}


/** Blanks the given spans (same length, `fill` per code unit) so a second parser cannot re-read them. */
export function blankSpans(text: string, spans: readonly { index: number; stop: number }[], fill = ' '): string {
  const chars = text.split('');
  for (const s of spans) for (let i = s.index; i < s.stop; i += 1) chars[i] = fill;
  return chars.join('');
}
