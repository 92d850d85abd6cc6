/**
 * Labelled exemplar sentences for the extraction recall net ({@link ./net.ts}): short statements
 * per class, in Chinese and English, embedded once per process. A statement the rules did not
 * turn into a candidate is compared with them by meaning, so a durable fact said without the
 * words the rules key on ("Eggs make my lips swell up") still becomes a memory, while questions,
 * small talk, other people's facts and one-off requests are held back by the "none" classes.
 *
 * Exemplars are written to cover forms (a reaction, an aversion, a habit, a plan, a complaint, a
 * directive) across many topics; none of them is a sentence of the labelled evaluation set
 * (test/fixtures/extraction-net/statements.jsonl), so the held-out numbers measure generalisation.
 */
import type { MemoryType } from '../types';

/** A class of the net: a durable memory kind, or a reason a statement is not one. */
export type NetClass =
  | 'fact.health'
  | 'fact.life'
  | 'preference.taste'
  | 'preference.habit'
  | 'goal'
  | 'pain_point'
  | 'instruction'
  | 'none.question'
  | 'none.smalltalk'
  | 'none.third_party'
  | 'none.request'
  | 'none.general'
  | 'none.transient';

/** The memory type a positive class yields; null for the "not durable" classes. */
export const NET_CLASS_TYPE: Readonly<Record<NetClass, MemoryType | null>> = {
  'fact.health': 'fact',
  'fact.life': 'fact',
  'preference.taste': 'preference',
  'preference.habit': 'preference',
  goal: 'goal',
  pain_point: 'pain_point',
  instruction: 'instruction',
  'none.question': null,
  'none.smalltalk': null,
  'none.third_party': null,
  'none.request': null,
  'none.general': null,
  'none.transient': null,
};

/** True for the classes that mean "a durable statement about the user". */
export function isDurableClass(c: NetClass): boolean {
  return NET_CLASS_TYPE[c] !== null;
}

/** One exemplar. */
export interface Prototype {
  cls: NetClass;
  lang: 'zh' | 'en';
  text: string;
}

const EN: Readonly<Record<NetClass, readonly string[]>> = {
  'fact.health': [
    'Eggs make my lips swell up.',
    'Sesame seeds give me hives.',
    'Penicillin nearly killed me once, so I can never take it.',
    'I need my inhaler whenever I exercise.',
    'My lower back gives out if I sit too long.',
    'I have a pacemaker.',
    'Strawberries make my mouth itch.',
    "My eyes can't tell red from green.",
    'I have a metal plate in my wrist.',
    'Too much sun gives me a rash.',
    "I've had epilepsy since I was a kid.",
    'Caffeine makes my heart race.',
    'Kiwi fruit makes my throat itchy.',
  ],
  'fact.life': [
    'I work as a paramedic.',
    "I'm a freelance translator.",
    'I live in a small flat in Leeds.',
    'I grew up in Nairobi.',
    'I have a teenage daughter.',
    "I've been married for ten years.",
    "I'm left-handed.",
    'My native language is Polish.',
    "I've got two cats and a parrot.",
    'I study mechanical engineering.',
    'I work from home full time.',
    'I moved here from Chile five years ago.',
  ],
  'preference.taste': [
    'Bananas make me gag.',
    'Nothing beats a bowl of ramen.',
    'Cucumber is the worst vegetable ever.',
    "I can't get enough of sour candy.",
    'Rainy days are my favourite.',
    'Sweet breakfasts are not my thing.',
    'Garlic in everything, the more the better.',
    "I'd take the mountains over the beach any day.",
    'Loud restaurants put me off.',
    'Crime novels are my guilty pleasure.',
    'Eggplant is a texture nightmare for me.',
    'I stopped eating beef years ago.',
    'Sugar in my tea? Never.',
  ],
  'preference.habit': [
    'I usually take the train to work.',
    'I always sketch on paper before I design anything.',
    'Most weekends I go fishing.',
    'I normally write my blog posts in Markdown.',
    'For side projects I tend to use SQLite.',
    'I run every evening after work.',
    'I keep all my passwords in a password manager.',
    'Every Sunday I cook for the whole week.',
    'Whenever I travel I pack the night before.',
    'I do my grocery shopping online.',
    'My editor of choice is VS Code.',
    'Spreadsheets are how I plan everything.',
  ],
  goal: [
    'I want to swim a mile without stopping by the summer.',
    "I'm working toward a pilot's licence.",
    'My goal is to read fifty books this year.',
    "I'm trying to pay off my student loans by 2028.",
    'I hope to move abroad within three years.',
    "I'm studying for the bar exam.",
    "I'd love to speak fluent Italian one day.",
    'I plan to get my AWS certification this year.',
    "I'm determined to quit smoking for good.",
    "I'm saving up to travel around South America.",
  ],
  pain_point: [
    "Our deploys keep timing out and it's killing me.",
    'The construction upstairs goes on all night and I cannot sleep.',
    'I struggle to focus for more than ten minutes.',
    'The build server crashes every other day.',
    'My back pain makes long meetings miserable.',
    "I'm constantly behind on email.",
    'Our database gets slower every week.',
    'I never have enough time for my kids.',
    'My commute eats three hours of my day.',
    'Merge conflicts eat up my whole afternoon.',
  ],
  instruction: [
    'Keep your answers short.',
    'Please always include code examples.',
    "Don't use jargon when you explain things to me.",
    'Use British spelling.',
    'Call me Sam.',
    'From now on, reply in Spanish.',
    'I prefer answers with a summary at the top.',
    "Please don't apologise so much.",
    'Show times in 24-hour format.',
    'Explain things to me step by step.',
    'Numbered steps are easier for me to follow, so use them.',
    'Leave out the disclaimers in your answers.',
    "I'd rather you ask before making assumptions.",
    'Long intros waste my time, get to the point.',
    'Prices in euros, please.',
  ],
  'none.question': [
    "What's the capital of Australia?",
    'How do I reverse a string in JavaScript?',
    'Is it safe to eat eggs every day?',
    'Can you suggest a book for a long flight?',
    'Why does my code throw a null pointer exception?',
    'What should I cook tonight?',
    'Do you know any good hiking trails near Denver?',
    'How many calories are in an avocado?',
  ],
  'none.smalltalk': [
    'Hello there!',
    'Thanks a lot!',
    "lol that's hilarious",
    'Good night.',
    'Okay, cool.',
    'Nice, that works.',
    'Sorry, my bad.',
    'Hmm, interesting.',
    "It's been a long day.",
  ],
  'none.third_party': [
    'My brother is allergic to eggs.',
    "My wife can't stand country music.",
    'My son usually walks to school.',
    'My boss used to be a nurse.',
    'My colleague always codes in Sublime.',
    'Her doctor told her to cut out sugar.',
    'My friend lives in Leeds.',
    'Our manager wants the report by Friday.',
    'My mom has asthma.',
    'He goes fishing every weekend.',
  ],
  'none.request': [
    'Write a function that sorts this list.',
    'Use Rust for this tool.',
    'Draft a reply to this email.',
    'Summarise this article for me.',
    'Do the login page in React.',
    'Make this paragraph shorter.',
    "Let's use SQLite for this prototype.",
    'Give me three name ideas for my startup.',
    'Convert this table to JSON.',
    'For this assignment, write it in C.',
  ],
  'none.general': [
    'Eggs are a good source of protein.',
    'Leeds gets a lot of rain.',
    'Python is popular for data science.',
    'Winter in Canada is brutal.',
    'Training for a triathlon takes months.',
    'Most people prefer summer.',
    'Sugar is bad for your teeth.',
    'React has a huge ecosystem.',
  ],
  'none.transient': [
    "I'm starving right now.",
    'I just finished my lunch.',
    "I'm on the bus.",
    'Heading to bed now.',
    "I'm a bit bored today.",
    'I just woke up.',
    "I'm at the office right now.",
  ],
};

const ZH: Readonly<Record<NetClass, readonly string[]>> = {
  'fact.health': [
    '我一吃鸡蛋嘴唇就肿。',
    '芝麻我碰了会起荨麻疹。',
    '青霉素我不能用，用了会休克。',
    '我有哮喘，运动要带喷雾。',
    '我颈椎不好，低头久了就头晕。',
    '我心脏装了起搏器。',
    '我是红绿色盲。',
    '我手腕里打过钢钉。',
    '喝了浓茶我就心慌睡不着。',
    '一晒太阳我皮肤就起疹子。',
    '尘螨让我一打扫就打喷嚏。',
    '我有癫痫，不能熬夜。',
  ],
  'fact.life': [
    '我是一名急诊科护士。',
    '我在一家外企做翻译。',
    '我住在青岛，离海边很近。',
    '我老家在东北。',
    '我有个上初中的儿子。',
    '我结婚十年了。',
    '我是左撇子。',
    '我的母语是维吾尔语。',
    '我家里有两只猫和一只鹦鹉。',
    '我在读机械工程的研究生。',
    '我一直在家远程办公。',
    '我五年前从西安搬过来的。',
  ],
  'preference.taste': [
    '香蕉我一闻就想吐。',
    '一碗热腾腾的拉面就能让我开心一整天。',
    '黄瓜是我最受不了的菜。',
    '酸的零食我怎么吃都吃不够。',
    '下雨天是我最爱的天气。',
    '甜口的早餐我吃不惯。',
    '大蒜越多越好，我无蒜不欢。',
    '比起海边，我更愿意去山里。',
    '吵闹的餐厅我待不下去。',
    '侦探小说是我的心头好。',
    '茄子那个口感我真的接受不了。',
    '牛肉我好几年前就不吃了。',
    '茶里加糖？绝对不行。',
  ],
  'preference.habit': [
    '我上班一般坐地铁。',
    '我做设计之前总是先在纸上画草图。',
    '周末我基本都去钓鱼。',
    '写博客我通常用 Markdown。',
    '个人项目我一般用 SQLite。',
    '我每天下班后都去跑步。',
    '我的密码都放在密码管理器里。',
    '每周日我都会把一周的饭做好。',
    '出门旅行前一晚我都会收拾好行李。',
    '买菜我都是在网上下单。',
    '我写东西默认用 VS Code。',
    '做计划我习惯用表格。',
  ],
  goal: [
    '我想在夏天前学会游一千米。',
    '我在考飞行执照。',
    '今年我要读完五十本书。',
    '我争取三年内还清助学贷款。',
    '我希望三年内出国工作。',
    '我在准备司法考试。',
    '总有一天我要说一口流利的意大利语。',
    '今年我计划拿下 AWS 认证。',
    '我要彻底把烟戒掉。',
    '我在攒钱去南美旅行。',
  ],
  pain_point: [
    '我们的部署老是超时，烦死了。',
    '楼上每天半夜装修，吵得我睡不着。',
    '我注意力很难集中超过十分钟。',
    '构建服务器隔一天就崩一次。',
    '腰疼让我开长会的时候特别痛苦。',
    '邮件永远回不完。',
    '我们的数据库一周比一周慢。',
    '我总是没时间陪孩子。',
    '每天通勤要花掉三个小时。',
    '代码冲突一解就是一下午。',
  ],
  instruction: [
    '回答简短一点。',
    '请每次都给出代码示例。',
    '给我讲东西的时候别用术语。',
    '用繁体字回复我。',
    '叫我小林就行。',
    '以后用英文回答我。',
    '我希望回答开头先有个总结。',
    '别老是道歉。',
    '时间都用24小时制。',
    '讲解的时候一步一步来。',
    '我希望你回答的时候多举几个例子。',
    '记得在代码里加上类型标注。',
    '没有示例的解释我看不懂，麻烦多给例子。',
    '价格都换算成人民币给我。',
    '开场白就省了，直接说重点。',
  ],
  'none.question': [
    '澳大利亚的首都是哪里？',
    'JavaScript 怎么反转字符串？',
    '每天吃鸡蛋安全吗？',
    '长途飞机上看什么书好？',
    '为什么我的代码报空指针？',
    '今晚做什么菜好？',
    '北京附近有什么好的徒步路线吗？',
    '一个牛油果有多少热量？',
  ],
  'none.smalltalk': ['你好呀！', '太感谢了！', '哈哈哈笑死我了', '晚安。', '好的，没问题。', '不错，能用了。', '不好意思，我搞错了。', '嗯，有意思。', '今天真是漫长的一天。'],
  'none.third_party': [
    '我哥对鸡蛋过敏。',
    '我老婆受不了乡村音乐。',
    '我儿子一般走路上学。',
    '我老板以前是护士。',
    '我同事写代码总用 Sublime。',
    '她的医生让她少吃糖。',
    '我朋友住在青岛。',
    '我们经理要求周五前交报告。',
    '我妈有哮喘。',
    '他每个周末都去钓鱼。',
  ],
  'none.request': [
    '写一个给列表排序的函数。',
    '这个工具用 Rust 来写。',
    '帮我回一下这封邮件。',
    '把这篇文章总结一下。',
    '登录页用 React 做。',
    '把这段话改短一点。',
    '这个原型先用 SQLite。',
    '给我的创业公司起三个名字。',
    '把这个表格转成 JSON。',
    '这次作业用 C 语言写。',
  ],
  'none.general': ['鸡蛋是很好的蛋白质来源。', '青岛夏天很凉快。', 'Python 在数据科学里很流行。', '东北的冬天非常冷。', '铁人三项要训练好几个月。', '大多数人更喜欢夏天。', '糖吃多了对牙不好。', 'React 的生态很庞大。'],
  'none.transient': ['我现在饿死了。', '我刚吃完午饭。', '我在公交车上。', '准备睡觉了。', '今天有点无聊。', '我刚睡醒。', '我现在在公司。'],
};

function flatten(lang: 'zh' | 'en', table: Readonly<Record<NetClass, readonly string[]>>): Prototype[] {
  return (Object.keys(table) as NetClass[]).flatMap((cls) => table[cls].map((text) => ({ cls, lang, text })));
}

/** Every exemplar, English then Chinese, in a fixed order (the order of the cached vectors). */
export const PROTOTYPES: readonly Prototype[] = [...flatten('en', EN), ...flatten('zh', ZH)];
