/**
 * Chinese rules that act on memory or on the assistant: forget requests, standing and
 * task-scoped instructions, updates/negations of earlier facts, and decisions.
 */
import { cleanObject, guessForgetType, HEALTH_IMPORTANCE, isTaskScoped, makeMatch, subjectWords } from './match';
import { group, rule, type Rule } from './rule-kit';
import { ZH_CONDITIONS, ZH_JOB_SUFFIX } from './lexicon';
import { PRE, SELF, SELF_OPT, STANDING, zh } from './zh-common';
import { isFailureReport } from '../text/utterance-shape';
import { ZH_WEATHER } from './changes';
import { ZH_SYMPTOM_WORDS } from './resolution';

const ZH_SYMPTOM = new RegExp(`(?:${ZH_SYMPTOM_WORDS})`, 'u');

function forgetSubject(raw: string): string {
  const cleaned = cleanObject(raw, 'zh').replace(/^(?:关于|有关)/u, '');
  if (/住哪|住在哪|住址|地址|住的地方|家在哪/u.test(cleaned)) return '住';
  return cleanObject(cleaned.replace(/的?(?:信息|资料|数据|记录|内容|事情?)$/u, ''), 'zh') || cleaned;
}

function forget(id: string, m: RegExpExecArray) {
  const subject = forgetSubject(group(m));
  if (!subject) return null;
  return makeMatch(id, { type: guessForgetType(subject), intent: 'forget', confidence: 0.95, importance: 0.8, subject });
}

const FORGET_VERB = '(?:忘掉|忘记|忘了吧|删掉|删除|清除|清掉|抹掉|别再?记(?:住|着)?|不要再?记(?:住|着)?|不用记(?:住|着)?|别存|不要存|别保存|不要保存)';
// 少 / 多 only with something the assistant does: "以后少用emoji" is an instruction, "以后少吃外卖" a resolution.
const ASSISTANT_VERB = '(?:回复|回答|[答说讲写用别发给]|[少多](?:用|说|发|写|讲|问|提|给|举|废话|解释)|叫我|称呼|提醒|推荐|不要|不用|记得|简洁|详细|解释|告诉|问我|帮我|代码|格式|语气|列|举例|附上|加上|标注|翻译|总结)';
/**
 * After a standing marker the assistant must be the one acting: its verb opens what follows
 * ("以后都用中文回答", "每次先给结论"), or "你" acts further on ("以后我说简单点你就只给结论").
 * "每次开会投影仪都连不上" and "以后我都自己做饭了" are the user's life, not instructions.
 */
const ASSISTANT_ACTS = new RegExp(`^(?:都|也|就|请|麻烦|你|的|要|还是|尽量|一律|统一|全部|务必|必须|千万|最好|先|直接|再|只|[跟和对]我){0,4}${ASSISTANT_VERB}|你(?:就|要|都|得|再|只|先){0,3}${ASSISTANT_VERB}`, 'u');

/**
 * "要是我说简单点，你就只给结论", "我回太长了的时候，请压缩到三句话": a condition on the user's own
 * doing, then the assistant told what to do, holds for every such time. Read over the whole
 * sentence (the condition is its lead-in).
 */
const ZH_CONDITIONAL_INSTRUCTION = zh(
  // Chinese drops the subject, so the assistant must be addressed (请 / 麻烦 / 你 with a verb) or
  // the verb be one only it does for the user: "每次我下班，就给我妈打电话" is the user's own habit.
  '^(?:如果|要是|当|每当|每次|只要|一旦)?我[^，,。！？]{1,30}?(?:的时候|时|的话|之后)?[，,]\\s*(?:[就都先只]|直接){0,2}' +
    '(?:(?:请|麻烦)(?!问)\\S|你(?:[就都先只]|直接){0,3}(?:给|告诉我|帮我|用|压缩|标|写|回复|回答|列|附|加上|翻译|总结|提醒我|别|不要|不用)|(?:告诉我|帮我|提醒我|回复我|回答我|总结|翻译|压缩|列出|标注|标一下))',
);

/** Chinese rules checked before any statement rule: forget, instruction, decision, update. */
export const ZH_INTENT_RULES: readonly Rule[] = [
  rule('zh.forget.verb', zh(`^(?:请|麻烦)?你?(?:帮我)?(?:把)?${FORGET_VERB}(?<obj>.+)$`), (m) => forget('zh.forget.verb', m)),
  rule('zh.forget.ba', zh(`^(?:请|麻烦)?你?(?:帮我)?把(?<obj>.+?)(?:都|全部|全)?(?:给我)?(?:删了|删掉|删除|忘了|忘掉|忘记|清掉|清除)(?:吧|吗|啊)?$`), (m) =>
    forget('zh.forget.ba', m),
  ),
  rule('zh.forget.dontwant', zh(`^${PRE}我?不(?:想|希望|要)(?:让)?你(?:再)?(?:记|记住|存|保存|留着)(?<obj>.+)$`), (m) => forget('zh.forget.dontwant', m)),

  rule('zh.instr.standing', zh(`^(?:请|麻烦)?你?${STANDING}[，,\\s]*(?:请|麻烦)?你?(?<obj>[^，,\\s].*)$`), (m, clause) =>
    ASSISTANT_ACTS.test(group(m)) && !isFailureReport(clause, 'zh') ? makeMatch('zh.instr.standing', { type: 'instruction', confidence: 0.9, standing: true }) : null,
  ),
  rule('zh.instr.conditional', ZH_CONDITIONAL_INSTRUCTION, () => makeMatch('zh.instr.conditional', { type: 'instruction', confidence: 0.85, standing: true })),
  rule(
    'zh.instr.style',
    zh('^(?:请|麻烦)?你?(?:都|一律|尽量)?(?:回复|回答|解释|说话|讲话|讲|答|写代码|写)(?:我)?(?:的时候|时)?(?:都|要|请|尽量|得|最好)?(?:用|简洁|简短|简单|详细|短|直接|具体|正式|口语|专业|通俗|精炼|少|多|别|不要|带)'),
    () => makeMatch('zh.instr.style', { type: 'instruction', confidence: 0.9, standing: true }),
  ),
  rule(
    'zh.instr.prohibit',
    zh('^(?:请|麻烦)?你?(?:不要|别|不许|禁止|不用|少|千万别|千万不要)(?:再)?(?:给我)?(?:用|发|加|推荐|提|问|带|写|废话|啰嗦|客套|讲|回|使用|回复|建议|说教|解释|称呼|叫我|喊我|劝|催)'),
    () => makeMatch('zh.instr.prohibit', { type: 'instruction', confidence: 0.9, standing: true }),
  ),
  rule('zh.instr.language', zh('^(?:请)?(?:用|使用)(?:中文|英文|英语|日语|简体|繁体|普通话|粤语)(?:回复|回答|跟我说|交流|沟通|和我聊|聊)'), () =>
    makeMatch('zh.instr.language', { type: 'instruction', confidence: 0.9, standing: true }),
  ),
  rule('zh.instr.callme', zh('^(?:请|以后)?(?:叫我|称呼我)(?<obj>.+)$'), (m) =>
    makeMatch('zh.instr.callme', { type: 'instruction', confidence: 0.9, standing: true, relation: 'called', target: cleanObject(group(m).replace(/就行|就好|吧$/u, ''), 'zh') }),
  ),
  rule('zh.instr.terse', zh('^(?:请)?(?:少废话|说重点|直接说重点|直接给代码|直接给结论|别废话|少说废话)'), () =>
    makeMatch('zh.instr.terse', { type: 'instruction', confidence: 0.9, standing: true }),
  ),
  rule('zh.instr.task', zh('(?:用|使用|采用|改用|换成)\\s*(?<obj>[A-Za-z][\\w.+#-]*|[\\p{Script=Han}]{1,6}?(?:语言|框架|库))|(?:先别|先不|别|不要|不用|先)'), (m, clause) =>
    isTaskScoped(clause) ? makeMatch('zh.instr.task', { type: 'instruction', confidence: 0.85, relation: 'task_uses', target: group(m) }) : null,
  ),

  rule('zh.decision', zh(`^${PRE}(?:我们|我|团队|公司|组里|大家|我们组|我们团队|最后|最终)?(?:已经|最终|最后|刚刚?|终于|一致)?(?:决定|定了|敲定|拍板|选定|商量好|商定)了?(?:用|采用|使用|选|上|改用)?(?<obj>.+)`), (m) =>
    makeMatch('zh.decision', { type: 'decision', confidence: 0.85, relation: 'decided', target: cleanObject(group(m), 'zh') }),
  ),

  rule('zh.update.allergy', zh(`${SELF_OPT}(?:对(?<obj>[^，,]+?))?(?:已经|现在)?(?:不|没那么|不再|没有)过敏了?$`), (m) =>
    makeMatch('zh.update.allergy', { type: 'fact', intent: 'update', confidence: 0.9, importance: HEALTH_IMPORTANCE, subject: cleanObject(group(m), 'zh') || '过敏' }),
  ),
  rule('zh.update.move', zh(`${SELF_OPT}(?:已经|刚|刚刚)?(?:搬到|搬去|搬回|搬家到|搬来|迁到|调到|调去|转到|移居|回到)了?(?<obj>[^，,]+)`), (m) =>
    makeMatch('zh.update.move', { type: 'fact', intent: 'update', confidence: 0.9, relation: 'lives_in', target: cleanObject(group(m).replace(/(?:住|生活|定居|工作|去)了?$/u, ''), 'zh'), subject: '住' }),
  ),
  rule('zh.update.jobchange', zh(`${SELF_OPT}(?<gap>[^，,]{0,10}?)(?:换了?(?:个|份)?(?:工作|岗位|公司)|跳槽|转行|离职|辞职|换工作)`), (m) =>
    // "我在想要不要换工作" only considers it.
    /想|要不要|考虑|打算|犹豫|是否|准备|如果|可能/u.test(group(m, 'gap'))
      ? null
      : makeMatch('zh.update.jobchange', { type: 'fact', intent: 'update', confidence: 0.9, subject: '工作' }),
  ),
  rule('zh.update.before', zh(`${SELF_OPT}(?:以前|之前|原来|过去|曾经|本来)(?<obj>[^，,]+)`), (m, _clause, segmenter) => {
    // "我以前住在北京，现在…": the old state announces that the next clause replaces it.
    const subject = subjectWords(group(m), 'zh', segmenter);
    return subject ? makeMatch('zh.update.before', { type: 'fact', intent: 'update', confidence: 0.85, subject }) : null;
  }),
  rule('zh.update.nowjob', zh(`${SELF_OPT}现在(?:是|在做|做|当)(?:一名|一个|个)?(?<obj>[^，,]+)`), (m) => {
    const job = cleanObject(group(m), 'zh');
    return ZH_JOB_SUFFIX.test(job)
      ? makeMatch('zh.update.nowjob', { type: 'fact', intent: 'update', confidence: 0.9, relation: 'works_as', target: job, subject: '工作' })
      : null;
  }),
  rule('zh.update.switch', zh('(?:从(?<from>[^从\\n\\r\\u2028\\u2029]+?))?(?:换成|改成|改为|换到|迁移到|切到|切换到|改用)了?(?<obj>.+)'), (m, clause, segmenter) => {
    if (isTaskScoped(clause)) return null;
    const to = cleanObject(group(m), 'zh');
    const from = cleanObject(group(m, 'from'), 'zh');
    return makeMatch('zh.update.switch', { type: 'fact', intent: 'update', confidence: 0.85, relation: 'uses', target: to, subject: subjectWords(from || to, 'zh', segmenter) });
  }),
  rule('zh.update.cured', zh('(?<![^，,])(?<obj>[^，,]+?)(?:已经|早就)?(?:好了|痊愈了?|康复了?|治好了|根治了|没事了)$'), (m, _clause, segmenter) => {
    const obj = cleanObject(group(m), 'zh');
    return ZH_CONDITIONS.test(obj) || /过敏|[病伤痛]/u.test(obj)
      ? makeMatch('zh.update.cured', { type: 'fact', intent: 'update', confidence: 0.85, importance: HEALTH_IMPORTANCE, subject: subjectWords(obj, 'zh', segmenter) })
      : null;
  }),
  rule('zh.update.quit', zh(`${SELF_OPT}(?:已经)?戒(?:掉)?了?(?<obj>[^了，,]+)了?$`), (m) =>
    makeMatch('zh.update.quit', { type: 'fact', intent: 'update', confidence: 0.9, relation: 'quit', target: cleanObject(group(m), 'zh'), subject: cleanObject(group(m), 'zh') }),
  ),
  rule('zh.update.can', zh(`${SELF_OPT}(?:现在|如今|目前)?(?:已经|又|终于)?(?:可以|能|敢|能够|又能|开始)(?<obj>[^，,]+?)了$`), (m, clause, segmenter) => {
    if (!/现在|如今|目前|已经|又|终于|开始/u.test(clause) || ZH_WEATHER.test(clause)) return null;
    const obj = cleanObject(group(m), 'zh');
    // "我又开始失眠了": a symptom that came back is a problem again, not a new ability.
    if (/开始/u.test(clause) && (ZH_SYMPTOM.test(obj) || ZH_CONDITIONS.test(obj))) return makeMatch('zh.update.can', { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: obj });
    const subject = subjectWords(obj, 'zh', segmenter);
    if (!subject) return null;
    const eats = /^(?:吃|喝)/u.test(obj);
    return makeMatch('zh.update.can', { type: 'fact', intent: 'update', confidence: 0.9, relation: eats ? 'eats' : 'can', target: obj.replace(/^(?:吃|喝)/u, ''), subject });
  }),
  rule('zh.update.nolonger', zh(`${SELF_OPT}(?:已经|早就|现在)?(?:不再|再也不|已经不|已经没|早就不|现在不)(?<obj>[^，,]+?)了?$`), (m, _clause, segmenter) => {
    const subject = subjectWords(group(m), 'zh', segmenter);
    return subject ? makeMatch('zh.update.nolonger', { type: 'fact', intent: 'update', confidence: 0.9, subject }) : null;
  }),
  rule('zh.update.notanymore', zh(`${SELF}(?:不|没)(?<obj>[^了，,]{1,12})了$`), (m, _clause, segmenter) => {
    const subject = subjectWords(group(m), 'zh', segmenter);
    return subject && !/^(?:知道|[懂行用要想会]|记得)/u.test(group(m))
      ? makeMatch('zh.update.notanymore', { type: 'fact', intent: 'update', confidence: 0.85, subject })
      : null;
  }),

];
