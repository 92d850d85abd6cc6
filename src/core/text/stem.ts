/**
 * The English (Porter2) stemmer of the Snowball project, for the BM25 analysis: "painted",
 * "painting" and "paints" all become "paint", "allergies" and "allergy" "allergi".
 *
 * Written here because no stemmer package is a dependency of the project (docs/decisions.md):
 * it follows the published algorithm (snowballstem.org, "The English (Porter2) stemming
 * algorithm") step by step, with the prefixes "gener"/"commun"/"arsen" and the exception lists,
 * and an integration test checks it word for word against PostgreSQL's `english_stem`
 * dictionary, which is the Snowball C implementation. A package that implements Porter2 can
 * replace the body of {@link englishStem} without re-posting anything, as long as that test
 * still passes.
 *
 * Pure, no I/O. Expects a lowercased word; anything that is not plain ASCII letters (with
 * apostrophes) is returned unchanged, so numbers, identifiers, accented and non-Latin words
 * are never touched.
 */

const VOWEL = /[aeiouy]/u;
const DOUBLE = /(?:bb|dd|ff|gg|mm|nn|pp|rr|tt)$/u;
const LI_ENDING = /[cdeghkmnrt]/u;
const PLAIN_WORD = /^[a-z']+$/u;

/** Words whose stem the rules would get wrong (Porter2's first exception list). */
const EXCEPTIONS: ReadonlyMap<string, string> = new Map(Object.entries({
  skis: 'ski', skies: 'sky', dying: 'die', lying: 'lie', tying: 'tie',
  idly: 'idl', gently: 'gentl', ugly: 'ugli', early: 'earli', only: 'onli', singly: 'singl',
  sky: 'sky', news: 'news', howe: 'howe', atlas: 'atlas', cosmos: 'cosmos', bias: 'bias', andes: 'andes',
}));

/** Left as they are after step 1a (Porter2's second exception list). */
const AFTER_1A: ReadonlySet<string> = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);

const isVowel = (c: string | undefined): boolean => c !== undefined && VOWEL.test(c);

/** Start of the region after the first non-vowel that follows a vowel, from `from` on. */
function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) {
    if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  }
  return w.length;
}

/** Does `w` (up to `end`) end in a short syllable? */
function endsShortSyllable(w: string, end = w.length): boolean {
  if (end === 2) return isVowel(w[0]) && !isVowel(w[1]);
  if (end < 3) return false;
  const [a, b, c] = [w[end - 3], w[end - 2], w[end - 1]];
  return !isVowel(a) && isVowel(b) && !isVowel(c) && c !== 'w' && c !== 'x' && c !== 'Y';
}

/** The longest of `suffixes` that `w` ends with, or undefined. Lists are longest first. */
function longest(w: string, suffixes: readonly string[]): string | undefined {
  return suffixes.find((s) => w.endsWith(s));
}

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['abli', 'able'], ['entli', 'ent'],
  ['ization', 'ize'], ['izer', 'ize'], ['ation', 'ate'], ['ator', 'ate'],
  ['alism', 'al'], ['aliti', 'al'], ['alli', 'al'], ['fulness', 'ful'], ['ousli', 'ous'], ['ousness', 'ous'],
  ['iveness', 'ive'], ['iviti', 'ive'], ['biliti', 'ble'], ['bli', 'ble'], ['ogi', 'og'], ['fulli', 'ful'],
  ['lessli', 'less'], ['li', ''],
];
const STEP2_SUFFIXES = STEP2.map(([s]) => s).sort((a, b) => b.length - a.length);
const STEP2_MAP = new Map(STEP2);

const STEP3: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'], ['tional', 'tion'], ['alize', 'al'], ['icate', 'ic'], ['iciti', 'ic'], ['ical', 'ic'],
  ['ful', ''], ['ness', ''], ['ative', ''],
];
const STEP3_SUFFIXES = STEP3.map(([s]) => s).sort((a, b) => b.length - a.length);
const STEP3_MAP = new Map(STEP3);

const STEP4_SUFFIXES = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'ion']
  .sort((a, b) => b.length - a.length);

/** The Porter2 stem of a lowercased English word ("painting" → "paint"); other tokens unchanged. */
export function englishStem(word: string): string {
  if (!PLAIN_WORD.test(word)) return word;
  let w = word.startsWith("'") ? word.slice(1) : word;
  if (w.length <= 2) return word;
  const exception = EXCEPTIONS.get(w);
  if (exception !== undefined) return exception;

  // y at the start or after a vowel is a consonant: mark it Y for the rest of the steps.
  w = w.replace(/^y/u, 'Y').replace(/([aeiouy])y/gu, '$1Y');

  const r1 = /^(?:gener|commun|arsen)/u.exec(w)?.[0].length ?? regionAfter(w, 0);
  const r2 = regionAfter(w, r1);
  const inR1 = (s: string): boolean => w.length - s.length >= r1;
  const inR2 = (s: string): boolean => w.length - s.length >= r2;

  // Step 0: possessives.
  const apostrophe = longest(w, ["'s'", "'s", "'"]);
  if (apostrophe) w = w.slice(0, -apostrophe.length);

  // Step 1a: plurals.
  const s1a = longest(w, ['sses', 'ied', 'ies', 'us', 'ss', 's']);
  if (s1a === 'sses') w = w.slice(0, -2);
  else if (s1a === 'ied' || s1a === 'ies') w = w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  else if (s1a === 's' && /[aeiouy]/u.test(w.slice(0, -2))) w = w.slice(0, -1);
  if (AFTER_1A.has(w)) return w;

  // Step 1b: -ed / -ing.
  const s1b = longest(w, ['eedly', 'ingly', 'edly', 'eed', 'ing', 'ed']);
  if (s1b === 'eed' || s1b === 'eedly') {
    if (inR1(s1b)) w = `${w.slice(0, -s1b.length)}ee`;
  } else if (s1b !== undefined) {
    const stem = w.slice(0, -s1b.length);
    if (/[aeiouy]/u.test(stem)) {
      w = stem;
      if (/(?:at|bl|iz)$/u.test(w)) w += 'e';
      else if (DOUBLE.test(w)) w = w.slice(0, -1);
      else if (r1 >= w.length && endsShortSyllable(w)) w += 'e';
    }
  }

  // Step 1c: a final y after a non-vowel that is not the first letter.
  if (/y$/iu.test(w) && w.length > 2 && !isVowel(w[w.length - 2])) w = `${w.slice(0, -1)}i`;

  // Step 2.
  const s2 = longest(w, STEP2_SUFFIXES);
  if (s2 !== undefined && inR1(s2)) {
    const before = w[w.length - s2.length - 1];
    if (s2 === 'ogi') {
      if (before === 'l') w = `${w.slice(0, -3)}og`;
    } else if (s2 === 'li') {
      if (before !== undefined && LI_ENDING.test(before)) w = w.slice(0, -2);
    } else {
      w = w.slice(0, -s2.length) + (STEP2_MAP.get(s2) ?? '');
    }
  }

  // Step 3.
  const s3 = longest(w, STEP3_SUFFIXES);
  if (s3 !== undefined && inR1(s3)) {
    if (s3 !== 'ative' || inR2(s3)) w = w.slice(0, -s3.length) + (STEP3_MAP.get(s3) ?? '');
  }

  // Step 4.
  const s4 = longest(w, STEP4_SUFFIXES);
  if (s4 !== undefined && inR2(s4)) {
    if (s4 !== 'ion' || /[st]$/u.test(w.slice(0, -3))) w = w.slice(0, -s4.length);
  }

  // Step 5.
  if (w.endsWith('e')) {
    if (inR2('e') || (inR1('e') && !endsShortSyllable(w, w.length - 1))) w = w.slice(0, -1);
  } else if (w.endsWith('ll') && inR2('l')) {
    w = w.slice(0, -1);
  }

  return w.replace(/Y/gu, 'y');
}
