/**
 * The attributes of the user a statement gives a value to: where they live, where or as what they
 * work, how they get around, which phone or computer they use, what they eat, whom they are with,
 * when they sleep, how they exercise. A change of value often shares no word with the old one
 * ("I live in Austin" → "just moved to Dallas", "我在上海一家银行上班" → "我跳槽去深圳了"), and
 * e5 puts it no closer to the old statement than a different fact, so neither the content words
 * nor a similarity threshold see it. The attribute does: one person has one home, one employer,
 * one diet at a time, so a later statement about the same attribute that says something changed
 * replaces the old one.
 *
 * An attribute is recognised by its predicate and the class nouns that name it ("live", "moved
 * to", "住在", "搬到"; "phone", "手机"), never by a particular value. Attributes a person holds
 * several of at once (sports, tools) change only when the later statement says it replaced one.
 */

export type Attribute =
  | 'home'
  | 'employer'
  | 'occupation'
  | 'commute'
  | 'phone'
  | 'computer'
  | 'diet'
  | 'partner'
  | 'children'
  | 'bedtime'
  | 'waking'
  | 'exercise';

interface AttributeCue {
  attribute: Attribute;
  cue: RegExp;
  /** Held several at once ("I run and swim"): only an explicit replacement ("switched", "改成") changes it. */
  several?: boolean;
  /**
   * Said whole in one statement (whether one has a partner, which children): a later statement of
   * it in other words restates or updates it. Attributes with facets are not ("I live in Brooklyn",
   * "my flat is on the 5th floor"), and neither are those several are held of.
   */
  whole?: boolean;
  /**
   * Changes only when both statements name the thing ("Pixel", "华为"): "I keep my phone on silent
   * now" says nothing of which phone it is.
   */
  named?: boolean;
}

// Matched on the lowercased text. Attributes with facets are split into them ("I work at
// Microsoft" and "I'm a manager now" are both true), so a change of one never replaces the other.
const CUES: readonly AttributeCue[] = [
  {
    attribute: 'home',
    // Not "moved my meeting to", not "work from home": a move of the speaker, a dwelling of theirs.
    cue: /\b(?:live|lives|living|lived|relocat\w*|based in|settled in|(?:my|a|the|our) (?:apartment|flat|house|place)|rent(?:ing|ed)? (?:a|an) (?:\w+ )?(?:room|flat|apartment|house|place|studio|condo|loft)|mov(?:e|ed|ing) (?:to|into|out|in|back|abroad|away|house))\b|住(?:[在到进]|的地方)|居住|搬[到去来家回]|定居|安家|租(?:房|了)|买了?房|家在/u,
  },
  {
    attribute: 'employer',
    // "在X上班" names a workplace; "骑车上班", "drive to work" are a commute.
    // Joining a company, not a gym or a club.
    cue: /\b(?:work(?:s|ed|ing)? (?:at|for)|employer|hired|joined(?! (?:a|an|the|my) (?:\w+ )?(?:gym|club|class|choir|league|group|course|program|community|band|team)\b)|quit my job)\b|在[^，。！？,.!?\s]{1,12}(?:上班|工作|任职)|跳槽|辞职|离职|入职/u,
  },
  {
    attribute: 'occupation',
    cue: /\b(?:work(?:s|ed|ing)? as|career|profession|teach(?:es|ing)?|teacher|nurse|engineer|developer|manager|accountant|lawyer|doctor|designer|programmer)\b|转行|职业|当[^，。！？,.!?\s]{0,4}[师员生]|老师|医生|护士|会计|律师|程序员|工程师|设计师|销售|运营/u,
  },
  {
    attribute: 'commute',
    // How one gets around, not how long it takes.
    cue: /\b(?:drive|drives|driving|car|bike|biking|bicycle|e-?bike|cycl(?:e|ing)|bus|train|subway|metro|carpool|scooter|(?:walk|walking) to (?:work|the office))\b|开车|开[一了着]?辆|驾驶|车|地铁|公交|骑|步行|打车/u,
  },
  { attribute: 'phone', named: true, cue: /\b(?:phone|iphone|android|smartphone)\b|手机|安卓/u },
  { attribute: 'computer', named: true, cue: /\b(?:laptop|computer|pc|mac|macbook|desktop)\b|电脑|笔记本电脑|台式机|macbook|mac/u },
  {
    attribute: 'diet',
    cue: /\b(?:vegetarian|vegan|pescatarian|meat|keto|paleo|diet|plant-based|carnivore)\b|吃素|素食|吃肉|吃荤|饮食|生酮|节食|断食/u,
  },
  {
    attribute: 'partner',
    whole: true,
    cue: /\b(?:single|dating|girlfriend|boyfriend|married|divorced|engaged|broke up|break up|partner|wife|husband|fianc[ée]e?|relationship)\b|单身|女朋友|男朋友|对象|结婚|离婚|分手|恋爱|订婚|老婆|老公/u,
  },
  {
    attribute: 'children',
    whole: true,
    // Having children, not what one of them does ("My son plays soccer").
    cue: /\b(?:i have|i've got|we have|we've got) [^.!?,;]*?\b(?:kids?|children|child|sons?|daughters?|twins)\b|\b(?:father|mother|mom|mum|dad|parent) of (?:one|two|three|four|five|\d)\b|\bmy (?:two|three|four|five|\d) (?:kids|children|sons|daughters)\b|我有[^，。！？,.!?]{0,4}(?:孩子|儿子|女儿|一儿一女|娃)|我家有[^，。！？,.!?]{0,6}(?:孩子|男孩|女孩|儿子|女儿)|[一两三四俩几]个(?:孩子|娃)|(?:娃|孩子)的(?:妈|爸)/u,
  },
  { attribute: 'bedtime', cue: /\b(?:bed|bedtime|sleep|night owl)\b|睡|上床|熬夜/u },
  { attribute: 'waking', cue: /\b(?:wake|waking|wakes|get up|gets up|getting up|early riser|alarm)\b|起床|早起|[点時时]起(?![来床])/u },
  {
    attribute: 'exercise',
    several: true,
    cue: /\b(?:gym|work ?out|workouts?|run|runs|running|jog|jogging|swim|swimming|exercise|yoga|pilates|lifting|tennis|basketball|soccer)\b|游泳|跑步|健身|锻炼|羽毛球|瑜伽|打球|篮球|足球|网球|普拉提/u,
  },
];

/**
 * The people words that are the attribute itself, not another person the statement is about: the
 * partner one has or has not, the children one has (and "father of two" is the speaker).
 */
export const KIN_WORDS: ReadonlyMap<Attribute, ReadonlySet<string>> = new Map([
  ['partner', new Set('女朋友 男朋友 对象 老婆 老公 爱人 妻子 丈夫 太太 girlfriend boyfriend partner wife husband fiance fiancee spouse'.split(' '))],
  ['children', new Set('孩子 小孩 儿子 女儿 宝宝 娃 妈 爸 妈妈 爸爸 kid kids child children son daughter baby mom mum mother dad father'.split(' '))],
]);

/**
 * Words that say a value is new wherever they stand, beyond the change words every statement is
 * read for (./wording.ts): a new post ("joined", "跳槽", "转行"), a purchase or a sale ("bought",
 * "sold", "入手", "卖了"), an ending of a bond ("broke up", "分手"), "from now on" ("以后", "从此").
 */
const EN_NEW_VALUE = /\b(?:joined|sold|bought|broke up|split up|from now on)\b/u;
const ZH_NEW_VALUE = /卖了|卖掉|买了|入手|以后|从此|今后|跳槽|辞职|离职|转行|入职|分手|离婚/u;

/**
 * Words that say a value is new only of what comes right after them: "started eating vegan",
 * "got a new laptop", "开始吃素". Of anything else in the sentence they say nothing about the
 * attribute: "my car got a new windshield", "my boyfriend got a new job", "地铁又涨价了" and
 * "started renting a storage unit" change nothing the user said before. So does a Chinese
 * sentence-final "了", which marks any new state ("车坏了"), not a new value of an attribute.
 */
const EN_NEW_BEFORE = /\b(?:start(?:ed|ing)|began|got (?:a|an|my|the)(?: new)?|new)\s+/gu;
const ZH_NEW_BEFORE = /开始|又/gu;
/** How far after such a word the attribute's own word may start: a word of English ("eating vegan"), a couple of characters of Chinese ("开始在家吃素"). */
const EN_NEW_REACH = 12;
const ZH_NEW_REACH = 3;

/** Whether a word of {@link EN_NEW_BEFORE} or {@link ZH_NEW_BEFORE} is followed closely by one of the statement's attribute cues. */
function newValueBefore(lower: string, cues: readonly RegExp[]): boolean {
  for (const [pattern, reach] of [[EN_NEW_BEFORE, EN_NEW_REACH], [ZH_NEW_BEFORE, ZH_NEW_REACH]] as const) {
    for (const m of lower.matchAll(pattern)) {
      const rest = lower.slice(m.index + m[0].length, m.index + m[0].length + reach + 40);
      if (cues.some((cue) => (cue.exec(rest)?.index ?? Infinity) <= reach)) return true;
    }
  }
  return false;
}

/** A purpose a device or a habit serves ("for gaming", "for work", "打游戏用"): two purposes, two facts. */
const EN_PURPOSE = /\bfor (?!everything|all|now|good|years|months|weeks|days|a |an |the |me\b|my (?:whole|entire)\b)([a-z]+(?: [a-z]+)?)/gu;
const ZH_PURPOSE = /(?:用来|拿来)([^，。！？,.!?\s]{1,6})|([^，。！？,.!?\s用]{1,6})用(?=[，。！？,.!?\s]|$)|([^，。！？,.!?\s用]{1,6})用(?=[a-z\u4e00-\u9fff])/gu;
/** What opens a Chinese clause before its purpose and is none: the speaker, a time, an adverb. */
const ZH_NOT_PURPOSE = /^(?:我们?|[你他她都也还就在是只]|现在|如今|以后|之后|今后|从此|每天|天天|平时|平常|一般|主要|目前|最近|已经|其实)+/u;

/**
 * A condition of its own ("when it rains", "有时候"): a habit for some days beside the usual one,
 * not in its place.
 */
const CONDITION = /\b(?:when|whenever|if|unless|sometimes|occasionally)\b|的时候|如果|要是|有时|偶尔|下雨/u;

/**
 * Names a make or a model: a Latin word with a capital inside or after its first letter, or a
 * number ("iPhone 15", "Pixel 7", "MacBook"), a capitalised one inside a sentence ("an Android
 * phone"), or a Chinese word before the device ("华为手机", "联想笔记本").
 */
const NAMES_THING = /\b[a-z]*[A-Z][A-Za-z]*\s?\d+\b|\b[A-Za-z][a-z]*[A-Z][A-Za-z]*\b|(?<!^|[.!?]\s)\b[A-Z][a-z]+\b|\p{Script=Han}{2}(?<![的了个我新这那])(?:手机|电脑|笔记本|平板)/u;

/** What {@link readAttributes} reads of a statement. */
export interface Attributes {
  /** The attributes it gives a value to. */
  of: ReadonlySet<Attribute>;
  /** Of those, the ones held several at once. */
  several: ReadonlySet<Attribute>;
  /** Of those, the ones said whole (which a restatement in other words may rewrite). */
  whole: ReadonlySet<Attribute>;
  /** Of those, the ones that change only when both statements name the thing. */
  named: ReadonlySet<Attribute>;
  /** Says under what condition ("when it rains"). */
  conditional: boolean;
  /** Names a make or a model. */
  namesThing: boolean;
  /** Says a value is new (beyond the words ./wording.ts reads for a change). */
  newValue: boolean;
  /** The purposes it names ("gaming", "打游戏"). */
  purposes: ReadonlySet<string>;
}

export function readAttributes(text: string): Attributes {
  const lower = text.normalize('NFKC').toLowerCase();
  const of = new Set<Attribute>();
  const matched: RegExp[] = [];
  const several = new Set<Attribute>();
  const whole = new Set<Attribute>();
  const named = new Set<Attribute>();
  for (const c of CUES) {
    if (!c.cue.test(lower)) continue;
    of.add(c.attribute);
    matched.push(c.cue);
    if (c.several) several.add(c.attribute);
    if (c.whole) whole.add(c.attribute);
    if (c.named) named.add(c.attribute);
  }
  const purposes = new Set<string>();
  for (const m of lower.matchAll(EN_PURPOSE)) purposes.add(m[1]!);
  for (const m of lower.matchAll(ZH_PURPOSE)) purposes.add((m[1] ?? m[2] ?? m[3])!.replace(ZH_NOT_PURPOSE, ''));
  purposes.delete('');
  return { of, several, whole, named, conditional: CONDITION.test(lower), namesThing: NAMES_THING.test(text.normalize('NFKC')), newValue: EN_NEW_VALUE.test(lower) || ZH_NEW_VALUE.test(lower) || newValueBefore(lower, matched), purposes };
}

/** The attributes both statements give a value to. */
export function sharedAttributes(a: Attributes, b: Attributes): Attribute[] {
  return [...a.of].filter((x) => b.of.has(x));
}
