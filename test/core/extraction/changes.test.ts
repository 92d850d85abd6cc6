import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';
import { isUnmetChange } from '../../../src/core/extraction/changes';
import { detectResolution } from '../../../src/core/extraction/resolution';
import { extractCandidatesOffline } from '../../../src/core/extraction/offline-extractor';
import { screenCandidates } from '../../../src/core/extraction/provenance';
import type { ConversationMessage, MemoryCandidate } from '../../../src/core/types';

/**
 * Change statements (src/core/extraction/changes.ts) and the recovery shapes added beside them in
 * resolution.ts: one case or more per rule, and the look-alikes each must leave alone. None of
 * these sentences is a line of test/fixtures/change-statements.
 */
const AT = new Date('2026-07-01T10:00:00Z');

function kept(text: string): MemoryCandidate[] {
  const message = { id: 'm1', role: 'user', content: text, at: AT } as ConversationMessage;
  const { accepted } = screenCandidates(extractCandidatesOffline([message], { segmenter: jiebaSegmenter }), [message], jiebaSegmenter);
  return accepted.filter((c) => c.role === 'user' && c.confidence >= 0.7);
}

/** What the statement became: "fact/update", "pain_point/assert"… */
const shapes = (text: string) => kept(text).map((c) => `${c.type}/${c.intent}`);
const isState = (text: string) => kept(text).some((c) => (c.type === 'fact' || c.type === 'preference') && c.scope === 'global');
const changesNothing = (text: string) => !kept(text).some((c) => c.type === 'fact' || c.type === 'preference' || c.intent === 'update' || c.intent === 'resolve');

describe('a new state of the user', () => {
  it.each([
    ['en.change.lead', 'From now on I take the stairs everywhere'],
    ['en.change.lead', 'Starting this week I bike to the office'],
    ['en.change.become', "I've become a night owl"],
    ['en.change.become', 'I have become vegetarian'],
    ['en.change.gone', 'We went plant-based over the summer'],
    ['en.change.gone', "I'm going fully keto"],
    ['en.change.switched', "I've switched to a standing desk"],
    ['en.change.switched', 'migrated to Arch for my home server'],
    ['en.change.on', "I'm on Fedora these days"],
    ['en.change.ismy', 'Firefox is my browser now'],
    ['en.change.now', 'I work from the library now'],
    ['en.change.now', 'I walk the kids to school these days'],
    ['en.change.bond', 'Sam and I got engaged'],
    ['en.change.doing', "I'm teaching remotely these days"],
    ['en.change.now', 'I leave for work at 7 now'],
    ['zh.change.gai', '我最近改骑自行车了'],
    ['zh.change.lead', '从这个月开始我自己带饭了'],
    ['zh.change.nowis', '我现在开的是一辆电车'],
    ['zh.change.schedule', '我现在七点就起床了'],
    ['zh.change.bond', '我上个月结婚了'],
  ])('%s: %s', (_rule, text) => {
    expect(isState(text), `${text} → ${JSON.stringify(shapes(text))}`).toBe(true);
  });
});

describe('an ended or resumed state of the user names what changed', () => {
  it.each([
    ['en.change.lead', 'As of today I am not drinking soda', 'soda'],
    ['en.change.off', "I'm off caffeine for good", 'caffeine'],
    ['en.change.off', "I'm done with fast food", 'fast food'],
    ['en.change.notanymore', 'not a coffee drinker anymore', 'coffee drinker'],
    ['en.change.rid', 'I got rid of my television', 'television'],
    ['en.change.again', "I'm baking bread again", 'baking bread'],
    ['en.change.again', 'I started cycling to work again', 'cycling'],
    ['en.change.again', "I've gone back to journaling", 'journaling'],
    ['en.change.job', 'just started a new role at a bank', 'job'],
    ['zh.change.quit', '奶茶我已经戒了', '奶茶'],
    ['zh.change.nomore', '我这几年都不吃宵夜了', '宵夜'],
    ['zh.change.quit', '晚睡这个毛病我总算改掉了', '晚睡'],
    ['zh.change.none', '我现在一口甜食都不碰了', '甜食'],
    ['zh.change.lead', '从今天起我不点外卖了', '外卖'],
    ['zh.change.again', '我现在又开始游泳了', '游泳'],
    ['zh.change.again', '停了一年，最近重新开始练琴了', '练琴'],
  ])('%s: %s', (_rule, text, subject) => {
    const update = kept(text).find((c) => c.intent === 'update');
    expect(update?.type, `${text} → ${JSON.stringify(shapes(text))}`).toBe('fact');
    expect(update?.subject).toContain(subject.split(' ')[0]);
  });

  it('a symptom that came back is a problem, not a new state', () => {
    for (const text of ['I started getting nosebleeds again', '我又开始失眠了', "I'm coughing again"]) expect(shapes(text), text).toContain('pain_point/assert');
  });
});

describe('look-alikes that change nothing about the user', () => {
  it.each([
    // passing states and the weather
    "I'm on the bus now",
    "I'm on page 12 now",
    "I'm off work today",
    "I'm done for today",
    'I see it now',
    'I have to go now',
    'not hungry anymore',
    "I've become really tired",
    "I'm running late again",
    "I'm eating lunch now",
    'I owe you one now',
    'I wonder what happens now',
    'I totally see your point now',
    '以后我就知道了',
    '以后我们再聊吧',
    '现在用的是哪个版本',
    '我改了一下代码',
    '我今天都不吃了',
    '我现在在开会',
    '又开始下雨了',
    '天又冷起来了',
    '我又饿了',
    '我重新装了系统',
    '我今天十点就睡了',
    // plans, wishes and waiting
    "I'm going to start running again",
    'thinking of switching to Linux',
    'From now on I will try to eat less',
    'I want to go vegan someday',
    '以后我要早睡',
    '从下个月开始我准备戒糖了',
    '真想把奶茶戒了',
    '等我戒了烟再说',
    '他们离婚了',
    // a fix, not a habit
    'bug我已经改掉了',
  ])('%s', (text) => {
    expect(changesNothing(text), `${text} → ${JSON.stringify(shapes(text))}`).toBe(true);
  });
});

describe("someone else's change is not the user's", () => {
  it.each([
    ['My brother went vegan', 'brother'],
    ['My neighbour is smoking again', 'neighbour'],
    ["My sister doesn't eat meat anymore", 'sister'],
    ['我同事又开始跑步了', '同事'],
    ['我爸现在用的是华为手机', '我爸'],
  ])('%s', (text, who) => {
    const out = kept(text);
    expect(out.some((c) => c.intent === 'update' || c.intent === 'resolve'), JSON.stringify(shapes(text))).toBe(false);
    // Kept only as theirs: the memory still names them.
    for (const c of out) expect(c.text.toLowerCase()).toContain(who);
  });
});

describe('a health problem that is over, said without the fixed words', () => {
  it.each([
    ['我的尿酸降下来了', 'zh.controlled'],
    ['血压控制住了', 'zh.controlled'],
    ['医生说我不用再吃降压药了', 'zh.no_treatment'],
    ['我现在不用拄拐了', 'zh.no_treatment'],
    ['我的膝盖现在利索了', 'zh.done'],
    ["I haven't had an asthma attack in months", 'en.not_since'],
    ["I haven't had a flare-up for two years", 'en.not_since'],
    ['The panic attacks are a thing of the past', 'en.done'],
    ['The back pain is behind me', 'en.done'],
  ])('%s', (text, shape) => {
    const lang = /\p{Script=Han}/u.test(text) ? 'zh' : 'en';
    expect(detectResolution(text, lang, jiebaSegmenter)?.shape).toBe(shape);
    expect(shapes(text)).toContain('fact/resolve');
  });

  it.each([
    // a measure of something else, a treatment still needed, a complaint about the lack of good things
    '房价降下来了',
    '我还得吃药',
    '医生说还要打针',
    '不用再加班了',
    "I haven't had a day off in months",
    "I haven't had time in weeks",
    '我妈血压降下来了',
    "My dad hasn't had a migraine in months",
  ])('not: %s', (text) => {
    expect(kept(text).some((c) => c.intent === 'resolve'), `${text} → ${JSON.stringify(shapes(text))}`).toBe(false);
  });
});

describe('a change only planned, wished or waited for', () => {
  it('is at most a goal when the net reads it', () => {
    for (const t of ["Next year I'll move closer to work", 'I wish I could quit sugar', '要是能早点睡就好了', '盼着早日康复', '等腰好了去爬山']) expect(isUnmetChange(t, /\p{Script=Han}/u.test(t) ? 'zh' : 'en'), t).toBe(true);
    for (const t of ["I don't eat sugar anymore", 'I use a Kindle now', '我现在不吃糖了', '我的腰好了']) expect(isUnmetChange(t, /\p{Script=Han}/u.test(t) ? 'zh' : 'en'), t).toBe(false);
  });

  it('ends no problem and updates nothing through the rules', () => {
    for (const t of ['等我病好了，就去旅游', 'Once my ankle heals I will run again']) expect(changesNothing(t) || !kept(t).some((c) => c.intent === 'update' || c.intent === 'resolve'), t).toBe(true);
  });
});
