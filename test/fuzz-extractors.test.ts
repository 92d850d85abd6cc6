/**
 * Hostile text against every text-reading entry point of src/core (issue #20): random and
 * adversarial strings at the message size limit — long runs of spaces, digits, CJK, punctuation,
 * quotes and newlines, the openers of the rules that once backtracked, and seeded random mixes.
 * A super-linear pattern costs seconds to minutes on these sizes (the zh duration rule took
 * minutes on 3 KB); a linear entry point answers in milliseconds. The bound per call is far
 * above the worst seen on a loaded two-core machine and far below the super-linear cost.
 * The worst timings are printed, so a slow drift shows before it fails.
 */
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS } from '../src/core/text/bounds';
import { ENTRY_POINTS } from './support/core-entry-points';
import { mulberry32 } from './support/prng';

/** Per call; the worst seen at 8000 chars is printed by the test (tens of ms on a quiet machine). */
const BOUND_MS = 3000;
const SIZE = MAX_MESSAGE_CHARS;

const repeatTo = (unit: string, size = SIZE): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

/** Runs that defeat a pattern retried from every start: each is a rule's opener or its body. */
const ADVERSARIAL: Readonly<Record<string, string>> = {
  spaces: repeatTo(' '),
  tabs: repeatTo('\t'),
  newlines: repeatTo('\n'),
  digits: repeatTo('1'),
  cjk: repeatTo('的'),
  zhNumerals: repeatTo('一'),
  punctuation: repeatTo('.,;:!?'),
  zhPunctuation: repeatTo('。，！？'),
  quotes: repeatTo('"'),
  curlyQuotes: repeatTo('“'),
  openBrackets: repeatTo('['),
  angle: repeatTo('<'),
  reminderDigitSpaces: `提醒我3${repeatTo(' ', SIZE - 6)}x`,
  enReminderDigitSpaces: `remind me in 3${repeatTo(' ', SIZE - 15)}x`,
  mediaOpeners: repeatTo('[media attached'),
  memoriesOpeners: repeatTo('<memories\t'),
  contextOpeners: repeatTo('<context '),
  fences: repeatTo('```'),
  favourite: repeatTo('最爱的x'),
  switchFrom: repeatTo('用从为'),
  cured: repeatTo('经'),
  allergic: `${repeatTo('allergic to\t', SIZE - 20)} allergic to\no`,
  zhDuration: `${repeatTo('〇', SIZE - 4)}半日后`,
  speakerDots: `.${repeatTo(' ', SIZE - 2)}:`,
  quoteSpans: repeatTo('他说：“'),
  enQuoteSpans: repeatTo('she said "'),
  trailingParticles: `${repeatTo('了吧', SIZE - 1)}x`,
  vague: `报错${repeatTo('的报错', SIZE - 3)}全`,
  wordsAndSpaces: repeatTo('remind me tomorrow at '),
  metadataPreamble: repeatTo('(untrusted metadata'),
};

const FRAGMENTS = [' ', '  ', '\n', '\t', '1', '23', '3点', '明天', '提醒我', '“', '”', '"', "'", '「', '」', '：', ':', '.', '。', '，', ',', '!', '?', '的', '了', '吧', '我', '你', '从', '换成', '最爱的', '是', '已经', '好了', 'I ', 'my ', 'remind me ', 'in 2 hours', 'allergic to ', 'said ', 'because ', '[media attached', ']', '<memories>', '</memories>', '```', 'json', 'a', 'Z', 'é', '😀', '一', '十', '年', '月', '日', '号', '周', '天前'];

function randomText(next: () => number, size: number): string {
  let out = '';
  while (out.length < size) out += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)];
  return out.slice(0, size);
}

interface Timing {
  entry: string;
  input: string;
  ms: number;
}

function time(entry: string, input: string, run: (text: string) => unknown, worst: Timing[]): void {
  const started = performance.now();
  run(input);
  const ms = performance.now() - started;
  worst.push({ entry, input, ms });
  expect(ms, `${entry} on ${input}`).toBeLessThan(BOUND_MS);
}

function report(title: string, worst: Timing[]): void {
  const top = [...worst].sort((a, b) => b.ms - a.ms).slice(0, 8);
  console.log(`${title} — worst of ${worst.length} calls:\n${top.map((t) => `  ${t.ms.toFixed(1).padStart(8)} ms  ${t.entry} ← ${t.input}`).join('\n')}`);
}

describe('text entry points of src/core on hostile text at the size limit', () => {
  // One warm call each: module-level caches and lazy rule tables are not what is measured.
  for (const run of Object.values(ENTRY_POINTS)) run('提醒我明天3点开会. Remind me in 2 hours.');

  it.each(Object.entries(ENTRY_POINTS))('%s stays linear on adversarial runs', (entry, run) => {
    const worst: Timing[] = [];
    for (const [shape, input] of Object.entries(ADVERSARIAL)) time(entry, shape, () => run(input), worst);
    report(entry, worst);
  }, 120_000);

  it('every entry point stays linear on seeded random mixes', () => {
    const next = mulberry32(20);
    const worst: Timing[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [entry, run] of Object.entries(ENTRY_POINTS)) {
        const input = randomText(next, SIZE);
        time(entry, `random round ${round}`, () => run(input), worst);
      }
    }
    report('random mixes (mulberry32 seed 20)', worst);
  }, 180_000);
});
