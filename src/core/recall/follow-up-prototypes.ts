/**
 * Labelled prototype queries for the follow-up net (src/core/recall/follow-up.ts): what a vague
 * refer-back means, and the nearby things it is not. Embedded once per process with the query
 * prefix, like the query itself. None of them is a row of the labelled evaluation set
 * (test/fixtures/recall-followup/queries.jsonl); additions must come from its dev split's errors
 * only, never from the held-out split.
 */

/** `refer_back`: refers to an earlier problem without naming it. The others are hard negatives. */
export type FollowUpClass = 'refer_back' | 'names_thing' | 'new_question' | 'small_talk' | 'statement';

export interface FollowUpPrototype {
  text: string;
  cls: FollowUpClass;
}

const REFER_BACK = [
  // zh: persistence, recurrence, no change, a status question, a fix that did not help
  '还是那样子', '又变回原来那样了', '还没有好', '这事还是没弄好', '这个情况又来了', '跟前几天一样',
  '一直都没好', '还是没效果', '试过了，还是老样子', '那个事情有消息了吗', '之前那件事后来怎样了',
  '上次的问题解决了吗', '跟之前说的一样，又发生了', '今天又出现了', '没有任何变化', '反反复复的',
  '你给的方法不起作用', '照你说的弄了，没好', '又是同一个问题', '怎么还是这样', '好像更糟了',
  '还是没办法', '它又开始闹了', '那个情况有改善吗', '后来怎么样了', '这次又是老情况',
  // en
  "it's still not right", "that's happening again", 'no better than before', 'still the same issue',
  "it hasn't gotten any better", 'it came back this morning', "any news on the thing we discussed?",
  'did that ever get resolved?', "what's happening with that now?", 'your advice did not help',
  "I did what you said and it's still broken", "it's the same problem again", "it's worse today",
  'it happened again last night', 'still going on', "it won't stop", 'no change at all',
  'same as last week', "it's back again", 'how is that coming along?', 'that one is still bugging me',
  'it keeps coming back', 'still not fixed', 'the same thing happened again',
];

const NAMES_THING = [
  // a problem said again, but with its subject named: ordinary retrieval finds it by name
  '洗衣机又漏水了', '我的头又疼了', '网站还是打不开', '空调还是不制冷', '狗狗又拉肚子了', '服务器又宕机了',
  '牙还是疼', '老板又让我加班', '车又打不着火了', '微信还是登不上', '腰又酸了', '视频会议又卡了',
  'my tooth still hurts', 'the website is down again', 'the heater stopped working again', 'my dog is sick again',
  'the server crashed again', 'my shoulder is still sore', 'the app keeps freezing', 'my ankle is still swollen',
  'the sink is clogged again', 'Slack is still not loading', 'the train was late again', 'my eczema flared up again',
];

const NEW_QUESTION = [
  '帮我订一张去上海的票', '怎么学习英语比较快', '给我推荐几首歌', '晚上吃什么好', '这个词是什么意思',
  '帮我写一个排序函数', '北京今天多少度', '我的生日是哪天', '介绍一下量子计算', '周末有什么活动推荐',
  'what should I cook tonight?', 'how do I center a div', 'suggest a gift for my mom', 'translate this into French',
  'what is the capital of Peru', 'help me plan a trip to Japan', "what's my dentist's name?", 'how long should I boil an egg',
  'write an email to my landlord', 'what can you do?',
];

const SMALL_TALK = [
  '好嘞', '谢啦', '哈哈哈', '行吧', '嗯，好', '晚上好', '拜拜', '没事', '可以', '太棒了',
  'thank you so much', 'sure', 'alright', 'haha nice', 'hello', 'bye for now', 'awesome', 'yep', 'no worries', 'great, thanks',
];

const STATEMENT = [
  '我下个月要搬家', '我最近在减肥', '我女儿上小学了', '我不吃辣', '我刚买了一辆车',
  "I'm going to Paris next week", 'I quit smoking', "I'm a vegetarian", 'my sister is visiting', 'I got promoted today',
];

export const FOLLOW_UP_PROTOTYPES: readonly FollowUpPrototype[] = [
  ...REFER_BACK.map((text) => ({ text, cls: 'refer_back' as const })),
  ...NAMES_THING.map((text) => ({ text, cls: 'names_thing' as const })),
  ...NEW_QUESTION.map((text) => ({ text, cls: 'new_question' as const })),
  ...SMALL_TALK.map((text) => ({ text, cls: 'small_talk' as const })),
  ...STATEMENT.map((text) => ({ text, cls: 'statement' as const })),
];
