/**
 * How a later statement's words stand to an earlier one's, for the facts the embeddings cannot
 * give: on e5 a restatement ("花生我是过敏的" after "我对花生过敏"), a different fact of the same
 * shape ("我对青霉素过敏") and a changed value ("我现在住上海了" after "我住在杭州") are all as
 * close to the earlier statement as each other, so no similarity threshold separates them. Their
 * content words do:
 * - a restatement says nothing the other does not: one side's content words are all among the
 *   other's, in any order, with any particles; when the later one adds words it elaborates;
 * - a changed value keeps the thing it is about, drops the old value and says so, with a word of
 *   change ("换成", "改到", "moved to", "now"); an ending says the thing is over ("quit", "停了");
 * - anything else (a word put in another's place, a new person, a negation on one side only) is
 *   another fact, and both stay.
 * A wrong merge loses a memory, a missed one leaves a duplicate, so every doubt answers "neither".
 */
import type { Segmenter } from '../text/segmenter';
import { STOPWORDS } from '../text/tokenize';
import { englishStem } from '../text/stem';
import { stanceMarks, stanceOf } from './stance';
import { KIN_WORDS, readAttributes, sharedAttributes, type Attributes } from './attributes';

/** The kinds of value a changed statement puts in the old one's place: "杭州" → "上海", "Firefox" → "Chrome", "周六" → "周日". */
export type ValueKind = 'place' | 'name' | 'time';

export type WordingRelation = 'restates' | 'elaborates' | 'replaces' | 'reassigns' | 'same-attribute' | 'ends' | 'differs' | 'neither';

/** A statement's words, read once per statement. */
export interface Wording {
  /** The statement, normalised and lowercased. */
  text: string;
  /** Content words: what the statement is about and what it says of it (stems for English). */
  content: ReadonlySet<string>;
  /** The content words that are only a time, a date or an amount: a value, never what a change is about. */
  values: ReadonlySet<string>;
  /** The Chinese content words tagged as verbs: what a statement does, which a change of value keeps. */
  verbs: ReadonlySet<string>;
  /** What kind of value a content word is, when it is one: a place, a name, a time or an amount. */
  kinds: ReadonlyMap<string, ValueKind>;
  /** Every word as segmented, content or not: what a compound of the other side may split into. */
  vocabulary: ReadonlySet<string>;
  /** The people other than the speaker the statement names ("我妹妹", "my sister", "she"). */
  people: ReadonlySet<string>;
  negated: boolean;
  stance: -1 | 0 | 1;
  /** Wants, plans or hopes rather than states ("想", "打算", "want to", "I'd like to"): "我想去日本" is not "我去过日本". */
  wishes: boolean;
  /** Likes one thing and dislikes another ("I like cats and hate dogs"): which is which, the words cannot say. */
  mixed: boolean;
  /** Says the old value was replaced: "换成", "改到", "搬到", "switched", "moved". */
  switches: boolean;
  /** Says the old value is over: "停了", "戒了", "不用…了", "quit", "no longer", "used to". */
  ends: boolean;
  /** The content words that say a change ("换成", "quit"): no part of what changed. */
  markers: ReadonlySet<string>;
  /** Where in {@link sequence} a word of ending stands ("quit", "停"): its object is next to it. */
  endings: readonly number[];
  /**
   * The words in order: content words, the links "的" / "of", "" for a Chinese word that frames
   * (a particle, an adverb: it joins its neighbours), null for what separates them (punctuation,
   * an English function word). Where a compound shows ("cat videos", "猫的视频"), and what a word
   * of ending ends ("华为那台已经淘汰了").
   */
  sequence: readonly (string | null)[];
  /** Sets a new state against the past ("现在", "如今", "now", "these days"). */
  now: boolean;
  /** Says it is still so, or adds to what was: "还是", "也", "still", "too", "another". */
  keeps: boolean;
  /**
   * Said of the past: a past copula ("was", "were"), an aspect "过" ("我在武汉住过"), a word of an
   * earlier time ("以前", "曾经", "formerly"); with {@link latinForms}, what tells "I lived in
   * Denver" from "I live in Denver" once both are stemmed to the same words.
   */
  past: boolean;
  /** The English words as written, before stemming. */
  latinForms: ReadonlySet<string>;
  /**
   * Whose the statement is, read from how it opens: `self` for the speaker ("I'm based in
   * Portland", "we moved"), a thing of theirs for "my startup is…" / "our flat has…" (the
   * phrase as written and its words' stems, adjectives included), undefined when the opening
   * says neither ("Vim is my editor"; Chinese: there the people and the attributes already tell
   * a thing from its owner).
   */
  holder: 'self' | { phrase: string; words: ReadonlySet<string> } | undefined;
  /** The attributes of the user it gives a value to (where they live, what they drive: ./attributes.ts). */
  attributes: Attributes;
}

const HAN = /\p{Script=Han}/u;
/** Part-of-speech tags (jieba's) of words that frame a statement without naming anything: pronouns, particles, prepositions, conjunctions, adverbs, measure words, interjections. */
const FRAME_TAG = /^(?:[rpcdyqeoxw]|u\w*|df)$/u;
/** Tags of a time, a date or an amount. */
const VALUE_TAG = /^(?:t|tg|m|mq)$/u;

/** Words that say how often or how surely, not what: they may come and go in a restatement. */
const HEDGES = new Set(
  (
    '平时 平常 一般 通常 经常 总是 基本 基本上 真的 其实 确实 就是 比较 挺 特别 非常 超 超级 有点 一点 一直 现在 如今 目前 已经 还是 仍然 依然 依旧 也 还 又 都 就 会 对 跟 和 给 让 被 把 在 到 去 来 过 了 着 是 有 没 不 没有 别 ' +
    'usual usually always often generally basically really seriously honestly actually literally pretty quite very super totally definitely probably mostly kinda kind sort sorta tbh lol btw fyi ok okay yeah well now still anymore longer also too just even currently nowadays correction update reminder'
  )
    .split(/\s+/u)
    .filter(Boolean)
    .flatMap((w) => [w, englishStem(w)]),
);

/** English words that name a time, a date or an amount. */
const EN_VALUES = new Set(
  'today tonight tomorrow yesterday morning mornings afternoon afternoons evening evenings night nights week weeks weekend weekends weekday weekdays month months year years day days daily weekly monthly hour hours minute minutes am pm monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays spring summer autumn fall winter last next ago one two three four five six seven eight nine ten half'
    .split(' ')
    .flatMap((w) => [w, englishStem(w)]),
);

const EN_NEGATION = new Set(['not', 'no', 'never', 'cannot', 'nothing', 'none', 'nor']);
/** A Chinese word that negates ("不", "没有", "不吃", "喝不了"), and the words that only look like one. */
const ZH_NEGATION = /^[不没别无非]|不[了住行起]$/u;
const ZH_NOT_NEGATION = new Set(['不错', '不少', '不过', '不仅', '不但', '不管', '不久', '不断', '不同', '不然', '没准', '非常', '无论', '别人', '无聊']);

// People are told apart by the word that names them, as the speaker wrote it; an occupation the
// speaker may hold ("我是老师") is not another person.
const ZH_PEOPLE = new Set(
  '妈妈 爸爸 老妈 老爸 妈 爸 爸妈 父母 母亲 父亲 公婆 岳父 岳母 老伴 媳妇 男友 女友 老婆 老公 妻子 丈夫 太太 爱人 对象 女朋友 男朋友 女儿 儿子 孩子 小孩 宝宝 哥哥 姐姐 弟弟 妹妹 哥 姐 弟 妹 爷爷 奶奶 外公 外婆 姥姥 姥爷 表哥 表姐 表弟 表妹 堂哥 堂姐 堂弟 堂妹 叔叔 阿姨 舅舅 姑姑 同事 老板 领导 上司 组长 朋友 室友 舍友 邻居 同学 闺蜜 家人 他 她 他们 她们'.split(' '),
);
const EN_PEOPLE = new Set(
  'mom mum mother dad father wife husband partner spouse girlfriend boyfriend fiance fiancee son daughter kid kids child children baby brother sister grandma grandpa grandmother grandfather parents family friend friends colleague colleagues coworker coworkers boss roommate neighbor neighbour cousin uncle aunt he she him her his hers'.split(
    ' ',
  ),
);

// A change of value: the old one replaced or left. Not "最近" ("lately": a new habit beside the
// old ones), not a bare "了", not "switch" said of a plan.
const ZH_CHANGE = new Set('换 换成 换到 换掉 换了 改 改成 改用 改为 改到 改掉 搬 搬到 搬去 搬家 转到 转用 转成 升级 跳槽 调 调到 调整'.split(' '));
// Present and progressive forms too: "I'm switching to Obsidian", "I switch to Neovim", "moving my runs to Thursday".
const EN_CHANGE = new Set(
  'switched switch switches switching changed changing moved moving upgraded upgrading migrated migrating relocated relocating swapped swapping instead'.split(' '),
);
// An ending: the old value is simply over ("I quit smoking", "生酮停了", "随手记卸了").
const ZH_ENDS = new Set('淘汰 卸 卸载 卸掉 停 停掉 停用 戒 戒掉 戒烟 戒酒 弃用 放弃 辞职 离职 不再 再也不 取消 退掉'.split(' '));
/** "不用vue了", "不吃辣了": no longer. */
const ZH_NO_LONGER = /(?:不|没再|已经不)[^，。！？；,.!?;\s]{1,6}了(?=[，。！？；,.!?;\s]|$)/u;
const EN_ENDS_WORDS = new Set('ditched dropped quit quitting stopped anymore'.split(' '));
const EN_ENDS = /\b(?:no longer|any more|used to|got rid of|gave up)\b/u;
const EN_PAST = /\b(?:was|were|formerly|previously|back then|back when)\b/u;
/** Openings before the subject that say nothing of whose the statement is. */
const EN_LEAD_IN = /^(?:(?:so|and|but|also|oh|well|actually|honestly|btw|fyi|anyway|update|ok|okay)[,:]?\s+)*/u;
const EN_SELF_SUBJECT = /^(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll)\b/u;
/** "my startup is", "our new flat has": the words between the possessive and the verb name the thing. */
const EN_OWNED_SUBJECT = /^(?:my|our)\s+((?:[a-z][\w-]*\s+){0,3}?)(?:are|were|have|had|will|can|just|now|also|still|got|went|do|did|[a-z]+ed|[a-z]+s)\b/u;
const EN_PRESENT_COPULA = /\b(?:am|is|are|'m|'re)\b|\b(?:i|he|she|it)'s\b/u;
const ZH_EARLIER_TIME = /以前|曾经|从前|当年|那时|小时候/u;
const ZH_WISH = new Set('想 要 想要 打算 计划 希望 准备 梦想 目标 盼着 考虑'.split(' '));
// A plan to switch is no switch: "I'm thinking of switching to Linux".
const EN_WISH = /\b(?:want|wants|wanna|hope|hoping|wish|plan|plans|planning|goal|dream|going to|gonna|would like|'d like|'d love|would love|thinking (?:of|about)|considering)\b/u;
// A new state against the past; not "目前" / "currently" / "right now", which only say what holds at
// present ("My biggest problem right now is the wifi" replaces no other problem).
const ZH_NOW = new Set(['现在', '如今', '现今', '这阵子']);
const EN_NOW = /\b(?<!right )(?:now|nowadays|these days)\b/u;
// Still so, or one more beside the old: neither replaces anything.
const ZH_KEEPS = new Set('还是 仍然 依然 依旧 照样 照旧 一直 也 还 另外 另 还有 第二 同时 再'.split(' '));
const EN_KEEPS = /\b(?:still|too|also|as well|another|second|additionally|besides|in addition|plus|as always|as usual)\b/u;

const LATIN_RUN = /[a-z0-9]+(?:['’][a-z]+)*(?:[.+#:-][a-z0-9]+)*/giu;
/** Text before a word that ends a sentence, or none: a capital there names nothing. */
const SENTENCE_START = /(?:^|[.!?:。！？：]\s*)$/u;
/** jieba's tags of names: people, brands, organisations, other proper nouns. */
const NAME_TAG = /^(?:nr|nrt|nrfg|nz|nt)$/u;
/** Han words the segmenter did not know come back tagged "x": real words, unless a pronoun or a particle is glued on ("我用"). */
const GLUED = /^[我你他她它这那]|[是的了吗呢啊吧]$/u;
/** "我哥", "我的同事": a person named with the speaker's possessive glued on. */
const MY = /^(?:我们?|咱们?)的?/u;
/** Verbs that say nothing of what a statement is about without their object. */
const LIGHT = new Set(['用', '有', '是', '做', '去', '来', '弄', '搞', '在', ...'use have get got make do go take put keep'.split(' ').map(englishStem)]);
/** Words that hang one thing on another: "猫的视频" and "videos of cats" are videos. */
const LINK = new Set(['的', '之', 'of']);

/** One word of a statement, as {@link readWording} collects it. */
interface Word {
  /** The content word (a stem for English), or undefined for a framing word. */
  content?: string;
  /** The word as the vocabulary keeps it (what a compound of the other side may split into). */
  form?: string;
  value?: boolean;
  kind?: ValueKind;
  verb?: boolean;
  person?: string;
  negation?: boolean;
  switches?: boolean;
  ends?: boolean;
  now?: boolean;
  keeps?: boolean;
  /** The raw word, kept for the links between words ("的", "of"). */
  raw: string;
}

/** Reads a statement's words. `segmenter` splits Chinese and tags its parts of speech. */
export function readWording(text: string, segmenter: Segmenter): Wording {
  const normal = text.normalize('NFKC');
  const lower = normal.toLowerCase();
  const inChinese = HAN.test(normal);
  const words: Word[] = [];
  let last = 0;
  // Spaces separate words; they are no word themselves, so "peanut butter" stays two words side by side.
  let aspectGuo = false;
  const between = (from: number, to: number) => {
    for (const t of segmenter.tag(lower.slice(from, to))) {
      if (t.word.trim().length === 0) continue;
      // jieba tags the experiential "过" after a verb as an aspect particle, or keeps it in the verb ("去过").
      if ((t.word === '过' && t.tag === 'ug') || (t.tag === 'vq' && t.word.endsWith('过'))) aspectGuo = true;
      words.push(hanWord(t.word.trim(), t.tag));
    }
  };
  for (const m of normal.matchAll(LATIN_RUN)) {
    if (m.index > last) between(last, m.index);
    // A Latin word in Chinese text, or a capitalised one inside an English sentence, names something.
    const named = inChinese || (/^\p{Lu}/u.test(m[0]) && !SENTENCE_START.test(normal.slice(0, m.index)));
    words.push(latinWord(m[0].toLowerCase(), named));
    last = m.index + m[0].length;
  }
  if (last < lower.length) between(last, lower.length);
  const content = new Set<string>();
  const values = new Set<string>();
  const verbs = new Set<string>();
  const kinds = new Map<string, ValueKind>();
  const vocabulary = new Set<string>();
  const people = new Set<string>();
  const markers = new Set<string>();
  for (const w of words) {
    if (w.form) vocabulary.add(w.form);
    if (w.person) people.add(w.person);
    if (w.content === undefined) continue;
    content.add(w.content);
    vocabulary.add(w.content);
    if (w.value) values.add(w.content);
    if (w.verb) verbs.add(w.content);
    if (w.kind) kinds.set(w.content, w.kind);
    if (w.switches || w.ends || w.now) markers.add(w.content);
  }
  const ends = words.some((w) => w.ends) || ZH_NO_LONGER.test(lower) || EN_ENDS.test(lower);
  return {
    text: lower,
    content,
    values,
    verbs,
    kinds,
    vocabulary,
    people,
    sequence: words.map((w) => w.content ?? (LINK.has(w.raw) ? w.raw : w.form !== undefined && HAN.test(w.raw) ? '' : null)),
    negated: words.some((w) => w.negation),
    stance: stanceOf(lower),
    mixed: Object.values(stanceMarks(lower)).every(Boolean),
    wishes: words.some((w) => ZH_WISH.has(w.raw)) || EN_WISH.test(lower),
    switches: words.some((w) => w.switches),
    ends,
    markers,
    endings: words.flatMap((w, i) => (w.ends ? [i] : [])),
    now: words.some((w) => w.now) || EN_NOW.test(lower),
    keeps: words.some((w) => w.keeps) || EN_KEEPS.test(lower),
    past: aspectGuo || EN_PAST.test(lower) || ZH_EARLIER_TIME.test(lower),
    latinForms: new Set(words.filter((w) => !HAN.test(w.raw)).map((w) => w.raw)),
    attributes: readAttributes(normal),
    holder: inChinese ? undefined : holderOf(lower.replace(/’/gu, "'")),
  };
}

function holderOf(text: string): Wording['holder'] {
  const opening = text.replace(EN_LEAD_IN, '');
  if (EN_SELF_SUBJECT.test(opening)) return 'self';
  const owned = EN_OWNED_SUBJECT.exec(opening);
  const named = owned?.[1]?.trim();
  if (!owned || !named) return undefined;
  const words = named.split(/\s+/u);
  // "my sister lives…" is a person, told apart by the people.
  if (words.some((w) => EN_PEOPLE.has(w))) return undefined;
  // The phrase without its verb: "my dog lives" would read as the home ("lives").
  return { phrase: `${opening.startsWith('our') ? 'our' : 'my'} ${named}`, words: new Set(words.filter((w) => !STOPWORDS.has(w)).map(englishStem)) };
}

/**
 * "My startup is based in Portland" after "I'm based in Portland": a thing of the user's beside
 * the user, each with the place, and neither says the other (one says more only in words). Not
 * when the thing is what the other statement does ("my runs moved to Thursday" after "I run on
 * Tuesdays": the runs are the running).
 */
function heldApart(a: Wording, b: Wording): boolean {
  const thing = a.holder;
  if (thing === undefined || thing === 'self' || thing.words.size === 0 || b.holder !== 'self') return false;
  // The thing may be the attribute itself: "my phone is a Galaxy" and "I'm on an iPhone now" both
  // give the user's phone (./attributes.ts). "My startup is based in…" names no attribute by its thing.
  if (sharedAttributes(readAttributes(thing.phrase), b.attributes).length > 0) return false;
  return ![...thing.words].some((w) => b.content.has(w));
}

/** One Chinese word (or punctuation, which is no word) with its part-of-speech tag. */
function hanWord(w: string, tag: string): Word {
  if (!HAN.test(w)) return { raw: w };
  const marks: Word = { raw: w, form: w, switches: ZH_CHANGE.has(w), ends: ZH_ENDS.has(w), now: ZH_NOW.has(w), keeps: ZH_KEEPS.has(w) };
  const who = w.replace(MY, '');
  if (ZH_PEOPLE.has(w) || (who !== w && ZH_PEOPLE.has(who))) return { ...marks, person: who || w };
  if (ZH_NEGATION.test(w) && !ZH_NOT_NEGATION.has(w)) {
    // What is negated stays a content word: "不吃" says something about eating.
    const rest = w.replace(/^(?:没有|无法|[不没别无非])/u, '').replace(/^[了住行起]$|不[了住行起]$/u, '');
    return { ...marks, negation: true, content: rest.length > 0 && !HEDGES.has(rest) ? rest : undefined };
  }
  const discovered = tag === 'x' && w.length >= 2 && !GLUED.test(w);
  // A direction word of one character ("上", "里") frames; a longer one may be a thing ("前端").
  const frames = (FRAME_TAG.test(tag) && !discovered) || (tag === 'f' && w.length === 1) || HEDGES.has(w);
  if (frames) return marks;
  const kind: ValueKind | undefined = tag === 'ns' ? 'place' : NAME_TAG.test(tag) ? 'name' : VALUE_TAG.test(tag) ? 'time' : undefined;
  return { ...marks, content: w, value: VALUE_TAG.test(tag), kind, verb: tag.startsWith('v') && tag !== 'vn' && !LIGHT.has(w) };
}

/** One Latin word (lowercased): its stem, and whether it is content, a value, a negation, a person or a word of change. */
function latinWord(run: string, named: boolean): Word {
  const raw = run.replace(/’/gu, "'").replace(/'s$/u, '');
  const marks: Word = { raw, switches: EN_CHANGE.has(raw), ends: EN_ENDS_WORDS.has(raw) };
  if (/n't$/u.test(raw) || EN_NEGATION.has(raw)) return { ...marks, negation: true };
  if (EN_PEOPLE.has(raw)) return { ...marks, person: raw };
  if (raw.includes("'") || (raw.length < 2 && !/\d/u.test(raw)) || STOPWORDS.has(raw) || HEDGES.has(raw)) return marks;
  const stem = englishStem(raw);
  if (HEDGES.has(stem)) return { ...marks, form: stem };
  const value = EN_VALUES.has(raw) || EN_VALUES.has(stem) || /^\d/u.test(raw);
  return { ...marks, form: stem, content: stem, value, kind: value ? 'time' : named ? 'name' : undefined };
}

/** Longer words are kept whole: a compound is a few words, and the search is quadratic in its length. */
const MAX_SPLIT = 16;

/**
 * `word` written as the fewest words of `parts` end to end, when it takes two or more ("喝牛奶" =
 * "喝" + "牛奶"): one side's compound is then the other side's words segmented another way, not a
 * new thing ("花生酱" is not "花生" and a word either side said, so it stays whole).
 */
function split(word: string, parts: ReadonlySet<string>): string[] | undefined {
  const chars = [...word];
  if (chars.length > MAX_SPLIT) return undefined;
  // A Latin piece of one letter would split any word ("s" + "pain").
  const shortest = HAN.test(word) ? 1 : 2;
  const best: (string[] | undefined)[] = [[]];
  for (let j = 1; j <= chars.length; j++) {
    for (let i = 0; i < j; i++) {
      const piece = chars.slice(i, j).join('');
      const head = best[i];
      if (head === undefined || (i === 0 && j === chars.length) || j - i < shortest || !parts.has(piece)) continue;
      if (best[j] === undefined || head.length + 1 < best[j]!.length) best[j] = [...head, piece];
    }
  }
  return best[chars.length];
}

/** English stems of one word ("allergic" → "allerg", "allergy" → "allergi"): one a prefix of the other, at most two letters apart. */
function sameStem(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 5 && long.length - short.length <= 2 && long.startsWith(short);
}

/** The content words of `side`, Chinese compounds split into words either side said, framing pieces left out. */
function atoms(side: Wording, other: Wording): Set<string> {
  const parts = new Set([...side.vocabulary, ...other.vocabulary]);
  const frame = (w: string) => (side.vocabulary.has(w) && !side.content.has(w)) || (other.vocabulary.has(w) && !other.content.has(w));
  const out = new Set<string>();
  for (const w of side.content) {
    for (const p of split(w, parts) ?? [w]) if (!frame(p)) out.add(p);
  }
  return out;
}

/**
 * The words of `mine` that `theirs` also says: the same word, English stems of one word, or a
 * Chinese compound of theirs that ends in it (Chinese puts the head last: "橘猫" is a "猫",
 * "笔记本电脑" a "电脑", "拉肚子" says "肚子"; "花生酱" is no "花生").
 */
function said(mine: ReadonlySet<string>, theirs: ReadonlySet<string>): Set<string> {
  const names = (w: string, o: string) => (HAN.test(w) ? [...w].length >= 2 && o.length > w.length && o.endsWith(w) : !HAN.test(o) && sameStem(w, o));
  return new Set([...mine].filter((w) => theirs.has(w) || [...theirs].some((o) => names(w, o))));
}

/**
 * Whether `longer` hangs a word of its own on a shared one ("cat videos", "猫的视频", "videos of
 * cats", "peanut butter" beside "cats", "猫", "peanuts"): the shared word then only qualifies
 * another thing, and the longer statement is not about what the shorter one is.
 */
function namesAnotherThing(longer: Wording, shared: ReadonlySet<string>, extra: ReadonlySet<string>): boolean {
  const seq = longer.sequence;
  const is = (i: number, set: ReadonlySet<string>) => set.has(seq[i] ?? '');
  return seq.some(
    (_, i) => (is(i, shared) && is(i + 1, extra)) || (is(i, shared) && seq[i + 1] !== 'of' && LINK.has(seq[i + 1] ?? '') && is(i + 2, extra)) || (is(i, extra) && seq[i + 1] === 'of' && is(i + 2, shared)),
  );
}

/** All the words `later` has beyond the earlier's are words of change, times, amounts or light verbs. */
function addsNothing(later: Wording, laterSaid: ReadonlySet<string>, laterWords: ReadonlySet<string>): boolean {
  return [...laterWords].every((w) => laterSaid.has(w) || later.markers.has(w) || later.values.has(w) || LIGHT.has(w));
}

/**
 * Whether a word of ending in `later` has for its object (the content words written right before
 * or after it, "Notion" in "ditched Notion", "生酮" in "生酮停了") only words the earlier statement said.
 */
function endsOneOf(later: Wording, earlierSaid: ReadonlySet<string>): boolean {
  const seq = later.sequence;
  // A Chinese word that frames ("那台", "已经") is passed over; punctuation, a link or an English
  // function word ends the object ("ditched Notion | for Obsidian").
  const within = (i: number) => i >= 0 && i < seq.length && seq[i] !== null && !LINK.has(seq[i]!);
  return later.endings.some((at) => {
    const object: string[] = [];
    for (let i = at - 1; within(i); i--) if (seq[i]) object.push(seq[i]!);
    for (let i = at + 1; within(i); i++) if (seq[i]) object.push(seq[i]!);
    return object.length > 0 && object.every((w) => earlierSaid.has(w));
  });
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));

/**
 * Whether `later` gives another value to an attribute of the user `earlier` gave one to, sharing
 * no word that names it ("just moved to Dallas" after "I live in Austin", "我跳槽去深圳了" after
 * "我在上海工作"): the same attribute, a word saying the value is new, nothing kept beside the old,
 * and no purpose of its own ("a desktop for gaming" stands beside "a MacBook for work"). An
 * attribute held several at once changes only by an explicit replacement ("改成", "switched").
 */
function reassigns(later: Wording, earlier: Wording): boolean {
  if (!mayRelateByAttribute(later, earlier)) return false;
  const replaced = later.switches && !earlier.switches;
  const changed = replaced || later.ends || later.now || later.attributes.newValue;
  return sharedAttributes(later.attributes, earlier.attributes).some(
    (a) => (later.attributes.several.has(a) ? replaced : changed) && (!later.attributes.named.has(a) || (later.attributes.namesThing && earlier.attributes.namesThing)),
  );
}

/**
 * Whether `later`, in other words and with no word of change, speaks of an attribute of the user
 * said whole and `earlier` gave one to ("I'm a father of two" after "I have two kids"): it restates
 * it or changes it unsaid, and either way its words are the ones to keep. Not when it turns the
 * polarity or the stance.
 */
function onlyValueOf(later: Wording, earlier: Wording): boolean {
  if (!mayRelateByAttribute(later, earlier) || later.negated !== earlier.negated || later.stance * earlier.stance < 0 || later.mixed || earlier.mixed) return false;
  return sharedAttributes(later.attributes, earlier.attributes).some((a) => later.attributes.whole.has(a));
}

/**
 * Neither a wish, nor one more beside the old ("too", "also"), nor a purpose or a condition of its
 * own ("a desktop for gaming" stands beside "a MacBook for work", "the bus when it rains" beside
 * "I drive to work").
 */
function mayRelateByAttribute(later: Wording, earlier: Wording): boolean {
  const { attributes: now } = later;
  if (later.keeps || earlier.wishes || later.wishes) return false;
  if (now.conditional && !earlier.attributes.conditional) return false;
  return [...now.purposes].every((p) => earlier.attributes.purposes.has(p));
}

/**
 * Whether one statement speaks of the past and the other of the present: a past marker on one
 * side only, a past copula against a present one, or an English verb in its past form ("lived",
 * "worked") where the other says the verb in the present.
 */
function otherTense(later: Wording, earlier: Wording): boolean {
  if (later.past !== earlier.past) return true;
  const copulas = (w: Wording) => [EN_PAST.test(w.text), EN_PRESENT_COPULA.test(w.text)] as const;
  const [laterWas, laterIs] = copulas(later);
  const [earlierWas, earlierIs] = copulas(earlier);
  if ((laterWas && earlierIs && !earlierWas) || (earlierWas && laterIs && !laterWas)) return true;
  return pastOfPresent(later.latinForms, earlier.latinForms) || pastOfPresent(earlier.latinForms, later.latinForms);
}

/** A word of `a` that is the "-ed" past of a word `b` says in the present, which `b` never says in the past. */
function pastOfPresent(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const w of a) {
    if (w.length < 4 || !w.endsWith('ed') || b.has(w)) continue;
    const bases = [w.slice(0, -1), w.slice(0, -2), w.slice(0, -3), `${w.slice(0, -3)}y`];
    if (bases.some((base) => base.length >= 2 && b.has(base))) return true;
  }
  return false;
}

/** What the attributes say when the words share nothing that names a thing. */
function byAttribute(later: Wording, earlier: Wording): WordingRelation {
  if (reassigns(later, earlier)) return 'reassigns';
  if (onlyValueOf(later, earlier)) return 'same-attribute';
  // Values of two different attributes of the user are two facts, however alike they read: "我十一点
  // 起床" is not "我十一点睡觉", though the embeddings put them side by side.
  const { of: laterOf } = later.attributes;
  const { of: earlierOf } = earlier.attributes;
  return laterOf.size > 0 && earlierOf.size > 0 && sharedAttributes(later.attributes, earlier.attributes).length === 0 ? 'differs' : 'neither';
}

/**
 * "我们分手了，我现在单身" after "我有女朋友", "I'm a father of two" after "I have two kids": the
 * partner or the children are the attribute, not other people the statements are about. Only
 * when it is all both are about ("My wife works at Amazon" is her job).
 */
function aboutKin(later: Wording, earlier: Wording): boolean {
  return [...KIN_WORDS].some(([attribute, words]) => {
    const only = (w: Wording) => w.attributes.of.size === 1 && w.attributes.of.has(attribute) && [...w.people].every((p) => words.has(p.replace(MY, '')));
    return only(later) && only(earlier);
  });
}

/**
 * How `later` stands to `earlier`:
 * - `restates`: it says nothing `earlier` does not (same people, same polarity and stance, no
 *   word of change, all its content words among the earlier's, none of them only qualifying
 *   another thing there);
 * - `elaborates`: it says all `earlier` says and more (a word of change allowed: its words keep
 *   the old value and the new);
 * - `replaces`: it says a value changed — a word of change, or a "now" with a value of the same
 *   kind in the old one's place; nothing kept beside the old, the same people, at least one
 *   shared word that names a thing, and an earlier word it drops (not the earlier verb);
 * - `ends`: it says the earlier thing is over ("I quit smoking" after "I smoke");
 * - `differs`: another fact about the same thing: another person, a thing of the user's where the
 *   other is about the user ("my startup" beside "I"), a wish, a negation or a stance on one side
 *   only, or each says a word the other does not ("我对海鲜过敏" beside "我对芒果过敏");
 * - `neither`: the words say nothing either way (no content word, or none shared that names a thing).
 */
export function relateWording(later: Wording, earlier: Wording): WordingRelation {
  if (later.content.size === 0 || earlier.content.size === 0) return aboutKin(later, earlier) ? byAttribute(later, earlier) : 'neither';
  if (later.wishes !== earlier.wishes) return 'differs';
  if (!sameSet(later.people, earlier.people)) return aboutKin(later, earlier) ? byAttribute(later, earlier) : 'differs';
  if (heldApart(later, earlier) || heldApart(earlier, later)) return 'differs';
  const earlierWords = atoms(earlier, later);
  const laterWords = atoms(later, earlier);
  const earlierSaid = said(earlierWords, laterWords);
  const laterSaid = said(laterWords, earlierWords);
  // What both are about: a shared word that is neither a time or an amount nor a verb that says
  // nothing alone ("use", "用"): "I use Vim now for my own projects" is not about "I use VS Code at work".
  if (![...earlierSaid].some((w) => !earlier.values.has(w) && !LIGHT.has(w))) return byAttribute(later, earlier);
  if (!later.keeps) {
    const dropped = [...earlierWords].filter((w) => !earlierSaid.has(w));
    const added = [...laterWords].filter((w) => !laterSaid.has(w));
    // A "now" alone says what holds at present, which may be one more thing ("我现在在学吉他" beside
    // "我在学日语"); it replaces a value only when a value of the same kind takes the old one's place.
    const sameKind = dropped.some((d) => earlier.kinds.has(d) && added.some((a) => later.kinds.get(a) === earlier.kinds.get(d)));
    const replaces = (later.switches && !earlier.switches) || (later.now && !earlier.now && sameKind);
    // A value changes, not what the user does with it: "手机换成iPhone了" changes "我的手机是华为的",
    // not "我每天玩手机两小时".
    const keepsDoing = dropped.every((w) => !earlier.verbs.has(w) || later.text.includes(w));
    if (replaces && dropped.length > 0 && keepsDoing) return 'replaces';
    // An ending of the earlier statement's thing: "I quit smoking" ends "I smoke", "I ditched Notion
    // for Obsidian" ends "Notion is where I keep my notes", "I stopped drinking soda" ends nothing
    // of "I drink coffee every morning".
    const endsIt = later.ends && !earlier.ends && (addsNothing(later, laterSaid, laterWords) || endsOneOf(later, earlierSaid));
    if (endsIt) return 'ends';
  }
  // A stance against none is no reversal ("牛奶我喝不了" beside "我乳糖不耐受"), but one side liking
  // one thing and disliking another cannot be matched word for word.
  if (later.negated !== earlier.negated || later.stance * earlier.stance < 0 || later.mixed || earlier.mixed) return 'differs';
  // What was is not what is: "I live in Denver" neither restates nor is restated by "I lived in Denver".
  if (otherTense(later, earlier)) return 'differs';
  const extra = (words: ReadonlySet<string>, saidOf: ReadonlySet<string>) => new Set([...words].filter((w) => !saidOf.has(w)));
  if (laterSaid.size === laterWords.size) {
    // A word of change that could not be read as one never merges into the old memory; rewriting
    // it with the new words (below), which say all it said, loses nothing.
    if ((later.switches && !earlier.switches) || (later.ends && !earlier.ends)) return 'neither';
    return namesAnotherThing(earlier, laterSaid, extra(earlierWords, earlierSaid)) ? 'differs' : 'restates';
  }
  if (earlierSaid.size === earlierWords.size) return namesAnotherThing(later, earlierSaid, extra(laterWords, laterSaid)) ? 'differs' : 'elaborates';
  // Each says something the other does not: "我对海鲜过敏" beside "我对芒果过敏".
  return 'differs';
}
