import type { MemoryType } from '../src/core/types';

/**
 * Generated multi-topic bilingual chat for the load benchmarks: conversations about work, health,
 * food, travel, study, family, money and sport, in Chinese, English and both mixed in one line,
 * with names, places, numbers and dates varying per line — not the shared eval scenarios, and not
 * one repeated vocabulary. A deterministic PRNG, so two runs load the same corpus.
 */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Topic {
  type: MemoryType;
  zh: string[];
  en: string[];
  replyZh: string[];
  replyEn: string[];
}

const PEOPLE = ['小王', '李娜', '张伟', 'Anna', 'Tom', '妈妈', '老板', 'Priya', '陈医生', 'Lukas'];
const PLACES = ['杭州', '成都', 'Berlin', 'Lisbon', '京都', 'Vancouver', '西湖', 'the office', '健身房', 'Shenzhen'];
const THINGS = ['payment-svc', 'order-api', 'the Kafka consumer', 'Redis 集群', 'the CI pipeline', 'Postgres 主库', 'the mobile app', '数据报表'];
const FOODS = ['花生', '虾', 'gluten', '牛奶', 'sushi', '火锅', 'oat milk', '香菜', 'spicy noodles', '芒果'];

const TOPICS: Topic[] = [
  {
    type: 'pain_point',
    zh: ['{thing} 又超时了，p99 到了 {n} 毫秒', '昨晚 {thing} 报警了 {n} 次，我一直没睡好', '{thing} 的连接池好像不够用', '我怀疑 {thing} 有内存泄漏，重启后 {n} 分钟又涨上去了'],
    en: ['{thing} timed out again, p99 hit {n} ms', 'got paged {n} times for {thing} last night', 'I think {thing} leaks memory, it climbs back {n} minutes after a restart', 'the retries on {thing} make it worse'],
    replyZh: ['先看一下 {thing} 的慢查询日志，再确认连接池上限', '可以先把重试加上退避，避免雪崩'],
    replyEn: ['check the slow query log of {thing} first, then the pool limit', 'add backoff to the retries so they do not pile up'],
  },
  {
    type: 'fact',
    zh: ['我对{food}过敏，吃了会起疹子', '医生说我要少吃{food}', '{person}提醒我体检报告里胆固醇偏高', '我每天早上吃{food}'],
    en: ['I am allergic to {food}, I get hives', 'my doctor told me to cut down on {food}', '{person} reminded me my cholesterol was high at the checkup', 'I have {food} every morning'],
    replyZh: ['记住了，推荐菜的时候会避开{food}', '好的，下次提醒你复查'],
    replyEn: ['noted, I will avoid {food} when suggesting meals', 'ok, I will remind you to get it rechecked'],
  },
  {
    type: 'event',
    zh: ['下个月要去{place}出差 {n} 天', '上周末和{person}去{place}爬山了', '{person}的生日在 {n} 号，我想订个蛋糕', '周五在{place}有个分享会'],
    en: ['I am flying to {place} for {n} days next month', 'went hiking near {place} with {person} last weekend', "{person}'s birthday is on the {n}th, I want to order a cake", 'there is a meetup in {place} on Friday'],
    replyZh: ['需要我帮你列一个{place}的行程吗', '可以提前一周提醒你'],
    replyEn: ['want me to draft an itinerary for {place}?', 'I can remind you a week ahead'],
  },
  {
    type: 'preference',
    zh: ['我更喜欢{food}，不太喜欢甜的', '开会最好安排在上午，下午我效率很低', '回复我的时候简洁一点，用中文', '我喜欢在{place}附近跑步'],
    en: ['I prefer {food}, not much of a sweet tooth', 'mornings are best for meetings, I am useless after lunch', 'keep replies short please', 'I like running around {place}'],
    replyZh: ['好的，以后尽量简洁', '明白，会把会议放在上午'],
    replyEn: ['got it, short answers from now on', 'understood, meetings in the morning'],
  },
  {
    type: 'goal',
    zh: ['今年想把日语考到 N{n}', '我的目标是年底前跑完半马', '想在 {n} 个月内把{thing}迁到新集群', '准备存钱去{place}旅行'],
    en: ['I want to pass JLPT N{n} this year', 'my goal is a half marathon before December', 'I want {thing} migrated within {n} months', 'saving up for a trip to {place}'],
    replyZh: ['可以拆成每周的小目标', '我帮你记下了，每月回顾一次'],
    replyEn: ['let us break it into weekly steps', 'noted, we can review it monthly'],
  },
  {
    type: 'decision',
    zh: ['我们决定先重写{thing}的重试逻辑', '和{person}商量后，决定搬到{place}', '这个季度先不招人了', '决定每周三晚上练琴'],
    en: ['we decided to rewrite the retry logic of {thing} first', 'after talking to {person} we are moving to {place}', 'no hiring this quarter', 'piano practice every Wednesday evening'],
    replyZh: ['好的，我记下这个决定了', '需要的话我可以整理一下理由'],
    replyEn: ['ok, recorded that decision', 'I can write down the reasons if you like'],
  },
  {
    type: 'event',
    zh: ['房租下个月涨了 {n} 块', '这个月预算超了，外卖花了 {n} 元', '{person}借了我 {n} 块还没还', '刚交了{place}的房子定金'],
    en: ['rent goes up by {n} next month', 'over budget this month, {n} on takeout', '{person} still owes me {n}', 'just paid the deposit for the flat in {place}'],
    replyZh: ['要不要做个简单的月度预算表', '可以设个提醒'],
    replyEn: ['want a simple monthly budget sheet?', 'I can set a reminder'],
  },
];

const GREETINGS = ['早', '在吗', 'hi', 'ok thanks', '好的谢谢', '哈哈', 'hmm', '嗯嗯'];

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function fill(rand: () => number, template: string): string {
  return template
    .replaceAll('{thing}', pick(rand, THINGS))
    .replaceAll('{food}', pick(rand, FOODS))
    .replaceAll('{person}', pick(rand, PEOPLE))
    .replaceAll('{place}', pick(rand, PLACES))
    .replaceAll('{n}', String(1 + Math.floor(rand() * 300)));
}

/** One line of a topic: Chinese, English, or Chinese with an English clause (code-switching). */
function line(rand: () => number, topic: Topic, reply: boolean): string {
  const zh = reply ? topic.replyZh : topic.zh;
  const en = reply ? topic.replyEn : topic.en;
  const r = rand();
  if (r < 0.45) return fill(rand, pick(rand, zh));
  if (r < 0.85) return fill(rand, pick(rand, en));
  return `${fill(rand, pick(rand, zh))}，${fill(rand, pick(rand, en))}`;
}

/** A memory a user could have said: one line of a random topic, with its type. */
export function chatMemory(rand: () => number): { text: string; type: MemoryType } {
  const topic = pick(rand, TOPICS);
  return { text: line(rand, topic, false), type: topic.type };
}

export interface ChatLine {
  role: 'user' | 'assistant';
  content: string;
}

/** A conversation of 4–12 lines on one or two topics, with the odd bit of small talk. */
export function chatConversation(rand: () => number): ChatLine[] {
  const topics = [pick(rand, TOPICS), pick(rand, TOPICS)];
  const n = 2 * (2 + Math.floor(rand() * 5));
  return Array.from({ length: n }, (_, i) => {
    const role = i % 2 === 0 ? 'user' : 'assistant';
    const topic = topics[i < n / 2 ? 0 : 1]!;
    const content = role === 'user' && rand() < 0.1 ? pick(rand, GREETINGS) : line(rand, topic, role === 'assistant');
    return { role, content };
  });
}

/** Queries as a chat client sends them, each with the two chat lines before it. */
export function chatQueries(count: number, seed = 99): { query: string; recentMessages: string[] }[] {
  const rand = prng(seed);
  const asks = ['{thing} 最近怎么样了', 'how is {thing} doing?', '我对什么过敏来着', 'what am I allergic to?', '{person} 的生日是哪天', 'plan my trip to {place}', '我的目标是什么', 'what did we decide about {thing}?', '这个月预算怎么样', 'any tips for the run around {place}?', '上次说的房租的事', 'remind me what the doctor said', '还是不行', 'it is happening again'];
  return Array.from({ length: count }, () => {
    const convo = chatConversation(rand);
    return { query: fill(rand, pick(rand, asks)), recentMessages: convo.slice(-2).map((l) => l.content) };
  });
}
