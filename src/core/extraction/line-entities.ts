/**
 * The named things of one conversation line, for the graph over exchanges (seed 003 applied to raw
 * lines): what the memory extractor finds in a statement (relatives, foods, places, pets,
 * conditions, titles, languages, tech), plus the proper names a chat line carries that a memory
 * statement rarely does — a person or place named mid-sentence ("I met Jon at Lisbon's fair"),
 * jieba's person, organisation and other proper-noun tags. Names only: the adapter turns them into
 * the memory graph's canonical keys, so "my mom", "Mom" and "妈妈" meet in one node.
 */
import type { Segmenter } from '../text/segmenter';
import { detectLang } from '../text/sentences';
import { extractEntities } from './entities';

/** A line's leading "Name: " says who spoke, not what the line is about. */
const SPEAKER_PREFIX = /^\s*[A-Z][\p{L}'’-]{0,30}(?:\s[A-Z][\p{L}'’-]{0,30})?:\s+/u;
/** Words written with a capital mid-sentence that are not names. */
const NOT_A_NAME = /^(?:I|I'm|I've|I'd|I'll|Im|OK|Ok|Okay|Oh|Hey|Hi|Hello|Yes|No|Yeah|Yep|Wow|Thanks|Thank|Congrats|Congratulations|Sure|Great|Awesome|Cool|Sorry|Dear|Last|Next|This|That|Mr|Mrs|Ms|Dr|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|August|September|October|November|December|Today|Tomorrow|Yesterday|Tonight|God|Lol|LOL)$/u;
/** jieba tags of proper nouns: person, organisation, other proper noun (places come from extractEntities). */
const ZH_PROPER_TAGS = /^(?:nr|nrt|nrfg|nt|nz)$/u;
/** A relative named with a possessive (我妈, 我的姐姐): the memory graph's alias table keys it (kin:mother). */
const ZH_KIN = /(?:我们的|我的|[我咱俺])(?:妈妈|爸爸|姐姐|妹妹|哥哥|弟弟|老婆|老公|儿子|女儿|奶奶|爷爷|外婆|外公|姥姥|姥爷|[妈爸姐妹哥弟])/gu;
/** Most names kept per line: a line listing fifty things links to none of them more than to the rest. */
export const MAX_LINE_ENTITIES = 12;

/** `word` without the characters at its end that `keep` rejects (a loop: a trailing-run regex is quadratic). */
function trimEnd(word: string, keep: RegExp): string {
  const chars = [...word];
  while (chars.length > 0 && !keep.test(chars[chars.length - 1]!)) chars.pop();
  return chars.join('');
}
const NAME_CHAR = /[\p{L}'’-]/u;
const LETTER_CHAR = /[\p{L}'’]/u;

/**
 * Names used to address someone ("Thanks, Mel!", "Hey Caroline", "that's cool, Jon."): the line
 * speaks to that person, it is not about them, so it links to the rest of what it names only.
 * A run of capitals is an address when it follows a greeting or a comma and ends its clause.
 */
function addressedNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:^|[\s,])(\p{L}+)(,?)\s+([A-Z][\p{L}'’-]*(?: [A-Z][\p{L}'’-]*)?)(?=\s*(?:[!,.?…]|$))/gu)) {
    const before = m[1] ?? '';
    if (m[2] === ',' || NOT_A_NAME.test(before)) out.add((m[3] ?? '').toLowerCase());
  }
  return out;
}

/** Capitalised runs after a sentence's first word ("Jon", "New York", "Lisbon's" → "Lisbon"). */
function englishNames(text: string): string[] {
  const names: string[] = [];
  for (const sentence of text.split(/[.!?…\n;:]+|\s[-–—]\s/u)) {
    const words = sentence.trim().split(/\s+/u).filter((w) => w.length > 0);
    let run: string[] = [];
    const flush = (): void => {
      if (run.length > 0) names.push(run.join(' '));
      run = [];
    };
    for (let i = 1; i < words.length; i++) {
      const raw = words[i]!.replace(/^[("“'‘]+/u, '');
      const word = trimEnd(raw, NAME_CHAR).replace(/['’]s$/u, '');
      if (/^[A-Z][a-z][\p{L}'’-]*$/u.test(word) && !NOT_A_NAME.test(word)) run.push(word);
      else flush();
      // A comma or a bracket ends a name: "Jon, Ana and Li" are three.
      if (raw !== word) flush();
    }
    flush();
  }
  return names;
}

/** A name without the greeting or filler words a run of capitals picked up around it. */
function trimGreeting(name: string): string {
  const words = name.trim().split(/\s+/u);
  while (words.length > 0 && NOT_A_NAME.test(trimEnd(words[0]!, LETTER_CHAR))) words.shift();
  while (words.length > 0 && NOT_A_NAME.test(trimEnd(words[words.length - 1]!, LETTER_CHAR))) words.pop();
  return trimEnd(words.join(' '), /[^.,!?]/u);
}

/** The names one line mentions, each once (case-insensitively), at most {@link MAX_LINE_ENTITIES}. */
export function lineEntityNames(content: string, segmenter: Segmenter): string[] {
  const text = content.replace(SPEAKER_PREFIX, '');
  const lang = detectLang(text);
  // Sentence by sentence: the statement extractor's capitalised runs would cross ". " in a chat line
  // ("Mel. Relaxing"), and greetings open a run ("Hey Caroline") without being part of the name.
  const sentences = lang === 'zh' ? [text] : text.split(/(?<=[.!?…])\s+/u);
  const names = sentences.flatMap((s) => extractEntities(s, lang, segmenter).map((e) => trimGreeting(e.name)));
  if (lang === 'zh') {
    for (const m of text.matchAll(ZH_KIN)) names.push(m[0]);
    for (const { word, tag } of segmenter.tag(text)) if (ZH_PROPER_TAGS.test(tag) && [...word].length >= 2) names.push(word);
  }
  names.push(...englishNames(text));
  const seen = lang === 'zh' ? new Set<string>() : addressedNames(text);
  const out: string[] = [];
  for (const n of names) {
    const k = n.trim().toLowerCase();
    if (k.length < 2 || seen.has(k)) continue;
    seen.add(k);
    out.push(n.trim());
  }
  return out.slice(0, MAX_LINE_ENTITIES);
}
