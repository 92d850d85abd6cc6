/**
 * Chinese rules for things the user states about themself: goals, pain points, health, diet,
 * where they live, their job, family, pets, stack and projects, what they learn, likes and
 * dislikes, dated events, and generic "我的X是Y" facts.
 */
import { ZH_SHORT_LIVED, ZH_TIME } from './dates';
import { ZH_HABIT } from './habits';
import { isAboutSomeoneElse } from './subjects';
import { latinTokens } from './keywords';
import { TECH_KINDS, ZH_CITIES, ZH_CONDITIONS, ZH_FAMILY, ZH_JOB_SUFFIX, ZH_PETS } from './lexicon';
import { cleanObject, HEALTH_IMPORTANCE, makeMatch, type MatchInit } from './match';
import { group, rule, type Rule } from './rule-kit';
import { ADV, COUNT, I, PRE, SELF, SELF_OPT, zh } from './zh-common';

const obj = (m: RegExpExecArray, name = 'obj'): string => cleanObject(group(m, name), 'zh');
const fact = (id: string, init: Omit<MatchInit, 'type'>) => makeMatch(id, { type: 'fact', ...init });
const hasTech = (s: string): boolean => latinTokens(s).length > 0 || /框架|语言|数据库/u.test(s);
const shortLived = (clause: string): boolean => ZH_SHORT_LIVED.test(clause);

const PAIN_SYMPTOM =
  '(?:超时|崩溃|卡住?|卡顿|很慢|变慢|报错|出错|失败|挂掉?|宕机|掉线|闪退|OOM|内存泄漏|延迟|堵车?|失眠|睡不着|加班|疼|痛|漏水?|丢失?|断线?|死机|重启|焦虑|抽风|出问题|出bug|不稳定)';
const EVENT_VERB =
  /[去来回到见约带搬飞坐交跑爬逛游]|参加|开会|出差|面试|考试|答辩|预约|看了|吃了|做了|买了|拍了|加班|出发|旅行|旅游|体检|手术|住院|上课|提交|发布|上线|演讲|聚餐|过生日|结婚|请假|值班|打球|玩了|看病|复查|航班|会议|婚礼|生日|聚会|演出|比赛|截止|汇报|述职|毕业|入职|报到|开学|放假|度假|拜访|签约|约会|爬山|露营|上班|值班/u;
const HABIT = /一般|通常|平时|经常|常常|总是|每[周天晚次个]|习惯/u;
const OTHER_SUBJECT = /^(?:[你他她它谁]|他们|她们|别人|大家|有人)/u;

/** Chinese statement rules, most specific first. */
export const ZH_FACT_RULES: readonly Rule[] = [
  // Goals: an explicit goal word, or a wish with a deadline; a bare wish is weak.
  rule('zh.goal.explicit', zh(`^${PRE}(?:${I}的?)?(?:[\\p{Script=Han}]{0,6}的)?(?:目标|梦想|愿望|心愿|规划|小目标|flag|计划)(?:之一)?(?:是|就是|：|:)(?<obj>.+)`), (m) =>
    makeMatch('zh.goal.explicit', { type: 'goal', confidence: 0.9, relation: 'goal', target: obj(m) }),
  ),
  rule('zh.pain.most', zh('最(?:让我|令我)?(?:困扰|头疼|头痛|烦|痛苦|难受|焦虑|苦恼|发愁|愁)(?:我)?的(?:是|就是|事是|问题是)(?<obj>.+)'), (m) =>
    makeMatch('zh.pain.most', { type: 'pain_point', confidence: 0.9, relation: 'struggles_with', target: obj(m) }),
  ),
  rule('zh.pain.fix', zh(`${SELF_OPT}(?:很|特别|一直)?(?:想|希望|需要|急需)(?:解决|搞定|处理|修复|改善)(?<obj>.+)`), (m) =>
    makeMatch('zh.pain.fix', { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: obj(m) }),
  ),
  rule('zh.goal.deadline', zh(`${SELF_OPT}(?:想|要|希望|打算|计划|准备|争取|决心|立志|力争|必须|得)(?:在)?(?<obj>[^，,]*?(?:前|之前|以前|以内|为止|年底|年内|今年|明年|月内|周内|天内)[^，,]*)`), (m) =>
    makeMatch('zh.goal.deadline', { type: 'goal', confidence: 0.85, relation: 'goal', target: obj(m) }),
  ),
  rule('zh.pain.causes', zh('(?<![^\\n\\r\\u2028\\u2029])(?<obj>.+?)(?:让我|令我|搞得我|弄得我|害我)(?:很|特别|非常|超|有点|真的)?(?:头疼|困扰|崩溃|抓狂|烦|焦虑|难受|痛苦|头大|郁闷|失眠)'), (m) =>
    makeMatch('zh.pain.causes', { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: obj(m) }),
  ),
  rule('zh.pain.recurring', zh(`(?:一直|老是|总是|经常|动不动就?|每次都?|每天.{0,12}?都|天天|频繁|时不时|又)(?:会|要|在|得|是)?.{0,12}?${PAIN_SYMPTOM}`), (_m, clause) =>
    OTHER_SUBJECT.test(clause) && !/我/u.test(clause) ? null : makeMatch('zh.pain.recurring', { type: 'pain_point', confidence: 0.85, event: shortLived(clause) || ZH_TIME.test(clause) }),
  ),
  rule('zh.pain.slow', zh('(?:特别|非常|很|太|超级|巨|贼|好|有点)(?:慢|卡)|(?:慢|卡)(?:得要死|死了|得不行)|加载(?:很|特别|非常|太)?慢'), (_m, clause) =>
    OTHER_SUBJECT.test(clause) ? null : makeMatch('zh.pain.slow', { type: 'pain_point', confidence: 0.85 }),
  ),
  rule('zh.pain.problem', zh(`^${PRE}(?:${I}的?|我们的)?(?:[\\p{Script=Han}A-Za-z-]{0,8}的)?(?:问题|麻烦|难点|痛点|瓶颈|困难)(?:是|在于|就是)(?<obj>.+)`), (m) =>
    makeMatch('zh.pain.problem', { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: obj(m) }),
  ),
  rule('zh.pain.feeling', zh(`${SELF_OPT}(?:很|特别|非常|有点|一直|总是|老是)?(?:头疼|困扰|苦恼|焦虑|烦躁|郁闷|发愁|搞不定|解决不了|学不会|睡不着|失眠|压力(?:很|特别|太)?大)`), (_m, clause) =>
    makeMatch('zh.pain.feeling', { type: 'pain_point', confidence: 0.8, event: shortLived(clause) || ZH_TIME.test(clause) }),
  ),

  // Recurring dates are facts, not events that expire.
  rule('zh.fact.date', zh(`^${PRE}(?:我的|我|我(?:的)?[\\p{Script=Han}]{1,3}的)(?<what>生日|阳历生日|农历生日|结婚纪念日|纪念日)(?:是|在)(?<obj>[^，,]+)`), (m) =>
    fact('zh.fact.date', { confidence: 0.9, relation: group(m, 'what'), target: obj(m) }),
  ),
  rule('zh.fact.age', zh(`${SELF_OPT}(?:今年|已经)?(?<obj>[\\d一二两三四五六七八九十]{1,4})岁`), (m) => fact('zh.fact.age', { confidence: 0.85, relation: 'age', target: group(m) })),

  // Health: allergies and conditions rank high whatever else the clause says.
  rule('zh.health.allergy', zh(`${SELF_OPT}(?:一吃|吃了?|对|有)?(?<obj>[^，,]*?)(?:严重|轻微|有点|会)?过敏`), (m, clause) => {
    const target = obj(m).replace(/^(?:对|有)/u, '');
    // "我女儿对鸡蛋过敏", "我妹妹倒是对猫毛过敏": the allergy is a relative's.
    const relative = /^(?:我的?)?(?<who>\p{Script=Han}{1,3}?)(?:倒是|其实|可是|就|也|还|则|她|他)*对(?<what>.+)$/u.exec(target);
    const who = relative?.groups?.['who'] ?? '';
    if (relative && ZH_FAMILY.has(who)) {
      const match = fact('zh.health.allergy', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'has_family', target: who });
      match.relations.push({ source: who, relation: 'allergic_to', target: relative.groups?.['what'] ?? '' });
      return match;
    }
    // "我室友对狗毛过敏": someone else's, and not family the user lives with.
    if (isAboutSomeoneElse(clause, 'zh')) return null;
    return fact('zh.health.allergy', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'allergic_to', target: target || '过敏' });
  }),
  rule('zh.health.condition', zh(`${SELF_OPT}(?:有|患有|得了|得过|确诊了?|查出了?|被诊断出?|是)(?<obj>[^，,]+)`), (m) => {
    const c = ZH_CONDITIONS.exec(group(m));
    return c && !/^(?:毛病|有病)$/u.test(c[0]) ? fact('zh.health.condition', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'has_condition', target: c[0] }) : null;
  }),
  rule('zh.health.state', zh(`${SELF_OPT}(?<obj>乳糖不耐受?|怀孕了|贫血|近视|色盲|痛风|低血糖)`), (m) =>
    fact('zh.health.state', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'has_condition', target: group(m) }),
  ),
  rule('zh.health.cannot', zh(`${SELF_OPT}(?:不能|不可以|不敢|碰不得|吃不了|喝不了)(?:吃|喝|碰)?(?<obj>[^，,]+)`), (m) =>
    fact('zh.health.cannot', { confidence: 0.85, importance: 0.8, relation: 'avoids', target: obj(m) }),
  ),
  rule('zh.diet', zh(`${SELF_OPT}(?:只|坚持)?(?<obj>吃素|是素食(?:者|主义者)?|全素|吃全素|纯素|不吃肉|吃清真|不吃猪肉)`), (m) =>
    fact('zh.diet', { confidence: 0.9, importance: 0.7, relation: 'diet', target: group(m) }),
  ),

  // Where, what job, who is family.
  rule('zh.location.live', zh(`${SELF_OPT}(?:现在)?(?:住在|家住|家在|定居在?|生活在|常住在?|住)(?!院|得|了|的|不|哪)(?<obj>[^，,]+)`), (m) =>
    fact('zh.location.live', { confidence: 0.9, relation: 'lives_in', target: obj(m).replace(/^在/u, '') }),
  ),
  rule('zh.location.from', zh(`${SELF_OPT}(?:老家|家乡|籍贯)(?:是|在)(?<obj>[^，,]+)`), (m) => fact('zh.location.from', { confidence: 0.9, relation: 'from', target: obj(m) })),
  rule('zh.location.native', zh(`${SELF}是(?<obj>[\\p{Script=Han}]{2,4}?)人$`), (m) => {
    const place = group(m);
    return ZH_CITIES.has(place) || /[省市县]$/u.test(place) ? fact('zh.location.native', { confidence: 0.9, relation: 'from', target: place }) : null;
  }),
  rule('zh.job.is', zh(`${SELF}是(?:一名|一个|一位|个|名)?(?<obj>[^，,的]{1,15}?)$`), (m) => {
    const job = group(m).trim();
    if (/^(?:[说想在]|觉得|不是|真的|有点)/u.test(job)) return null;
    return ZH_JOB_SUFFIX.test(job)
      ? fact('zh.job.is', { confidence: 0.9, relation: 'works_as', target: job })
      : fact('zh.identity', { confidence: 0.75, relation: 'is', target: job });
  }),
  rule('zh.job.title', zh(`${SELF_OPT}(?:的)?(?:工作|职业|职位|岗位|专业)是(?<obj>[^，,]+)`), (m) => fact('zh.job.title', { confidence: 0.9, relation: 'works_as', target: obj(m) })),
  rule('zh.job.at', zh(`${SELF_OPT}在(?<obj>[^，,]{2,15}?)(?:工作|上班|实习|任职|当(?<job>[^，,]+)|做(?<job2>[^，,]+))`), (m) => {
    const place = obj(m);
    // "我在想要不要换工作" is musing, not a workplace.
    if (/^(?:想|考虑|犹豫|纠结|找|准备|打算)|要不要/u.test(place)) return null;
    const job = cleanObject(group(m, 'job') || group(m, 'job2'), 'zh');
    if (job) return fact('zh.job.at', { confidence: 0.85, relation: 'works_as', target: `${job}（${place}）` });
    return fact('zh.job.at', { confidence: 0.85, relation: ZH_CITIES.has(place) ? 'lives_in' : 'works_at', target: place });
  }),
  rule('zh.family.count', zh(`${SELF_OPT}有${COUNT}?(?:个|位)?(?<obj>孩子|小孩|儿子|女儿|娃|宝宝|兄弟姐妹|哥哥|姐姐|弟弟|妹妹|双胞胎)`), (m) =>
    fact('zh.family.count', { confidence: 0.9, relation: 'has_family', target: group(m) }),
  ),
  rule('zh.family.member', zh(`^${PRE}(?:我的?|我家)(?<obj>[\\p{Script=Han}]{1,3}?)(?:是|叫|在|今年|喜欢|不喜欢|不吃|不喝|爱|讨厌|怕|对|有|也|刚|下周|明天|住|每天|最近|已经|快)`), (m, clause) => {
    if (!ZH_FAMILY.has(group(m))) return null;
    // A relative's dated plan ("我老婆下周生日") is an event of the user's life.
    const type = ZH_TIME.test(clause) && EVENT_VERB.test(clause.replace(ZH_TIME, '')) ? 'event' : 'fact';
    return makeMatch('zh.family.member', { type, confidence: 0.85, relation: 'has_family', target: group(m) });
  }),
  rule('zh.family.status', zh(`${SELF_OPT}(?<obj>结婚了|已婚|离婚了|单身|订婚了|当爸爸了|当妈妈了)`), (m) => fact('zh.family.status', { confidence: 0.85, relation: 'marital_status', target: group(m) })),
  rule('zh.pet.keep', zh(`${SELF_OPT}(?:家里?)?(?<verb>养了|养着|养|有)(?:${COUNT}[只条个])?(?<obj>[\\p{Script=Han}]{1,4}?)(?=[，,。]|叫|$)`), (m, clause) => {
    const pet = group(m);
    if (!ZH_PETS.has(pet) && !group(m, 'verb').startsWith('养')) return null;
    const name = /(?:叫|名字是)([\p{Script=Han}A-Za-z]{1,6})/u.exec(clause)?.[1];
    return fact('zh.pet.keep', { confidence: 0.9, relation: 'has_pet', target: name ? `${pet}（${name}）` : pet });
  }),
  rule('zh.pet.mine', zh(`^${PRE}(?:我的|我家的?)(?<obj>[\\p{Script=Han}]{1,3}?)(?:叫|是|今年|喜欢|不喜欢|已经|最近)`), (m) =>
    ZH_PETS.has(group(m)) ? fact('zh.pet.mine', { confidence: 0.85, relation: 'has_pet', target: group(m) }) : null,
  ),

  // Stack and projects.
  rule('zh.stack.ours', zh(`^${PRE}(?:${I}|我们组|我们团队|我们公司|公司|团队|组里)(?:的)?\\s*(?:技术栈|stack|架构|后端|前端|主力语言|数据库|框架|项目)\\s*(?:是|用的是|用|都是|都用)(?<obj>[^，,]+)`), (m) =>
    fact('zh.stack.ours', { confidence: 0.9, relation: 'uses', target: obj(m) }),
  ),
  rule('zh.stack.habit', zh(`${SELF}[^，,。]{0,8}?(?:一般|通常|平时|平常|都|总是|主要|习惯|常|经常|喜欢|爱)(?:用|使用)(?<obj>[^，,]+)`), (m, clause) =>
    hasTech(group(m)) ? makeMatch('zh.stack.habit', { type: 'preference', confidence: 0.85, relation: 'uses', target: techTarget(group(m)) || obj(m), event: shortLived(clause) }) : null,
  ),
  rule('zh.stack.use', zh(`^${PRE}(?:${I}|我们组|我们团队|我们公司|公司|团队|组里)${ADV}(?:正在|在)*(?:用|使用|采用|用的是)(?<obj>[^，,]+)`), (m, clause) =>
    hasTech(group(m)) ? fact('zh.stack.use', { confidence: 0.85, relation: 'uses', target: techTarget(group(m)) || obj(m), event: shortLived(clause) }) : null,
  ),
  rule('zh.project.work', zh(`${SELF}(?:正在|在|最近在)?(?:做|负责|维护|开发|写|搞)(?:一个|个)?(?<obj>[^，,]+)`), (m, clause) => {
    const target = obj(m);
    return hasTech(target) || /项目|服务|系统|产品|app|App|网站|小程序/u.test(target)
      ? fact('zh.project.work', { confidence: 0.85, relation: 'works_on', target, event: shortLived(clause) })
      : null;
  }),
  rule('zh.project.named', zh(`^${PRE}(?:我的|我们的)?(?:主要|主力|当前|目前的?)?(?:项目|产品|服务)(?:是|叫)(?<obj>[^，,]+)`), (m) => fact('zh.project.named', { confidence: 0.85, relation: 'works_on', target: obj(m) })),
  rule('zh.learning', zh(`${SELF_OPT}(?:最近|正在|在|开始|刚开始)*(?:学习|自学|练习|学|练)(?!校|生|期|院|费|历|者|会了|到了|乖)(?<obj>[^，,了]+)`), (m, clause) =>
    obj(m) ? fact('zh.learning', { confidence: 0.85, relation: 'learning', target: obj(m), event: shortLived(clause) }) : null,
  ),

  // Likes and dislikes.
  rule('zh.pref.favourite', zh('(?:我|我的)?最(?:喜欢|爱)的(?<what>[^，,最]+?)(?:是|就是)(?<obj>[^，,]+)'), (m) =>
    makeMatch('zh.pref.favourite', { type: 'preference', confidence: 0.9, relation: 'likes', target: obj(m) }),
  ),
  rule('zh.pref.hobby', zh(`${SELF_OPT}(?:的)?(?:爱好|兴趣|兴趣爱好)(?:是|就是)(?<obj>[^，,]+)`), (m) =>
    makeMatch('zh.pref.hobby', { type: 'preference', confidence: 0.9, relation: 'likes', target: obj(m) }),
  ),
  rule('zh.pref.dislike', zh(`${SELF_OPT}(?:不喜欢|讨厌|不爱|受不了|反感|厌恶|不太喜欢|不怎么喜欢|接受不了|吃不惯|喝不惯)(?<obj>[^，,]+)`), (m, clause) =>
    makeMatch('zh.pref.dislike', { type: 'preference', confidence: 0.9, relation: 'dislikes', target: obj(m), event: shortLived(clause) }),
  ),
  rule('zh.pref.avoid', zh(`${SELF_OPT}(?:从来|从|一般|基本|平时)?(?:不吃|不喝|不碰|不抽|不沾|忌口|忌)(?<obj>[^，,]+)`), (m) =>
    makeMatch('zh.pref.avoid', { type: 'preference', confidence: 0.9, relation: 'avoids', target: obj(m) }),
  ),
  rule('zh.pref.like', zh(`${SELF_OPT}(?:喜欢|爱|热爱|偏爱|钟爱|迷上了?|爱上了?|偏好|享受|爱吃|爱喝|爱看|爱玩|倾向于?|偏向于?|宁愿|宁可)(?!人)(?<obj>[^，,]+)`), (m, clause) =>
    makeMatch('zh.pref.like', { type: 'preference', confidence: 0.9, relation: 'likes', target: obj(m), event: shortLived(clause) }),
  ),

  // Plans and wishes after likes, so "我喜欢…" never reads as a wish.
  rule('zh.goal.plan', zh(`${SELF}(?:打算|计划|准备|决心|立志|争取|力争)(?<obj>[^，,]+)`), (m, clause) =>
    ZH_TIME.test(clause)
      ? makeMatch('zh.goal.plan', { type: 'event', confidence: 0.85 })
      : makeMatch('zh.goal.plan', { type: 'goal', confidence: 0.8, relation: 'goal', target: obj(m) }),
  ),

  // Dated events: a day word plus an action, by the user or their family.
  rule('zh.event.dated', ZH_TIME, (_m, clause) => {
    if (OTHER_SUBJECT.test(clause) && !ZH_FAMILY.has(clause.slice(1, 3))) return null;
    const rest = clause.replace(ZH_TIME, '');
    if (!EVENT_VERB.test(rest) && !/(?:要|得|准备|打算|计划)\p{Script=Han}/u.test(rest)) return null;
    // "周末我一般去游泳" is a habit, not a dated event.
    if (HABIT.test(clause)) return isAboutSomeoneElse(clause, 'zh') ? null : makeMatch('zh.fact.habit', { type: 'preference', confidence: 0.8, relation: 'habit', target: cleanObject(clause, 'zh') });
    return makeMatch('zh.event.dated', { type: 'event', confidence: 0.85 });
  }),
  rule('zh.goal.wish', zh(`${SELF_OPT}(?:想要|想|希望|渴望|梦想)(?:能|能够|可以)?(?<obj>[^，,]+)`), (m, clause) => {
    const target = obj(m);
    if (!target || /^(?:[问聊说]|知道|了解|请教|让你|听听|看看)/u.test(target)) return null;
    return makeMatch('zh.goal.wish', { type: 'goal', confidence: 0.65, importance: 0.5, relation: 'wants', target, event: shortLived(clause) });
  }),

  // Generic possessions and facts, least specific last.
  rule('zh.fact.mine', zh(`^${PRE}(?:我的|我们的)(?<what>[^，,。]{1,12}?)(?:是|叫|在|有)(?<obj>[^，,]+)`), (m) =>
    fact('zh.fact.mine', { confidence: 0.8, relation: cleanObject(group(m, 'what'), 'zh'), target: obj(m) }),
  ),
  rule('zh.fact.team', zh(`^${PRE}我们(?:组|团队|公司|部门|项目|家)(?:的)?(?<obj>[^，,]+)`), (m) => fact('zh.fact.team', { confidence: 0.75, target: obj(m) })),
  rule('zh.fact.have', zh(`${SELF}有(?!点|些|时|空|事|没|什么|个问题|一个问题|问题|人|办法)(?<obj>[^，,]+)`), (m) => fact('zh.fact.have', { confidence: 0.75, relation: 'has', target: obj(m) })),
  rule('zh.fact.habit', zh(`${SELF_OPT}(?:每天|每周|每晚|每天早上|每个周末|习惯)(?<obj>[^，,]+)`), (m) =>
    makeMatch('zh.fact.habit', { type: 'preference', confidence: 0.8, relation: 'habit', target: obj(m) }),
  ),
  // Any other habit of the user's ("写接口我一般用 Java", "周报我都是周五写"; not "我同事一般…"): a standing preference, not an event.
  rule('zh.fact.habit.any', ZH_HABIT, (_m, clause) =>
    OTHER_SUBJECT.test(clause) || isAboutSomeoneElse(clause, 'zh') ? null : makeMatch('zh.fact.habit.any', { type: 'preference', confidence: 0.8, relation: 'habit', target: cleanObject(clause, 'zh') }),
  ),
];

/** The stack names in an object ("Go + Gin" → "Go, Gin"), or '' when there are none. */
function techTarget(raw: string): string {
  const names = latinTokens(raw).filter((t) => TECH_KINDS.has(t.toLowerCase()));
  if (names.length > 0) return names.join(', ');
  // Unknown tools keep their Latin name and drop the Chinese verb phrase after it ("VS Code 写代码" → "VS Code").
  return /^\s*([A-Za-z][\w.+#-]*(?:\s+[A-Za-z][\w.+#-]*)*)/u.exec(raw)?.[1] ?? '';
}
