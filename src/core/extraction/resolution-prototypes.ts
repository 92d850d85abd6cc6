/**
 * Labelled exemplars for resolution by meaning (src/core/extraction/net.ts): statements that a
 * problem is over, and the nearby things that are not — the problem going on or coming back,
 * breakage, a fix only planned or hoped for, a partial improvement. None of them is a row of
 * test/fixtures/extraction-resolution/statements.jsonl; additions come from the tune split only.
 */

export type ResolutionClass = 'resolved' | 'ongoing' | 'pending';

export interface ResolutionPrototype {
  text: string;
  cls: ResolutionClass;
}

const RESOLVED = [
  '水管不漏了', '颈椎终于不难受了', '投影仪又亮了', '上周的偏头痛没再来过', '找到原因了，现在一切顺利', '换了驱动之后声卡正常了',
  '孩子的湿疹退了', '同步的问题解决掉了', '那个卡顿的毛病没了', '数据库连接稳定了，再没断过', '终于能睡个整觉了', '过敏的症状都消了',
  '吃了药以后胃好多了，现在完全不痛', '重装系统后再也没蓝屏', '网速恢复了', '热水器现在出热水了',
  'the faucet stopped dripping', 'my neck feels fine now', 'the projector turns on again', "I haven't had a migraine in weeks",
  'found the cause, everything runs smoothly now', 'audio is back after the driver update', "the kid's eczema has cleared",
  'the sync bug is gone', 'no more lag since I cleared the cache', 'the database connection is stable now',
  'I can finally sleep through the night', 'my allergy symptoms have settled down', 'reinstalling fixed the blue screens',
  'the internet speed is back to normal', 'we finally got the heater going again', 'the pain has completely gone away',
];

const ONGOING = [
  '水管还在漏', '颈椎又开始难受了', '投影仪不亮了', '偏头痛又犯了', '找不到原因，还是很卡', '声卡没声音了',
  '湿疹越来越严重', '同步又失败了', '数据库老是断开', '最近总是睡不好', '过敏还没好', '又蓝屏了',
  'the faucet keeps dripping', 'my neck still hurts', "the projector won't turn on", 'the migraine is back',
  "still can't find the cause", 'the audio cut out again', 'the eczema is getting worse', 'the sync keeps failing',
  'the database connection drops every hour', "I still can't sleep", 'my allergies are acting up', 'blue screen again this morning',
  '稍微好一点，但还是疼', 'slightly better but it still aches',
];

const PENDING = [
  '明天找人来修水管', '等修好了告诉你', '希望下周能好', '打算重装系统试试', '医生说要过几周才能好', '我准备换个路由器',
  "I'm getting the faucet fixed tomorrow", "I'll tell you once it's sorted", 'hopefully it clears up next week',
  "I'm going to try reinstalling", 'the doctor says it will take a few weeks', 'I plan to replace the router',
  '如果修好了就好了', "I'd love for it to just work",
];

export const RESOLUTION_PROTOTYPES: readonly ResolutionPrototype[] = [
  ...RESOLVED.map((text) => ({ text, cls: 'resolved' as const })),
  ...ONGOING.map((text) => ({ text, cls: 'ongoing' as const })),
  ...PENDING.map((text) => ({ text, cls: 'pending' as const })),
];
