/**
 * Three shapes of a user sentence that decide what it may become (issue #23): small talk (a
 * greeting, an acknowledgement, "lol nothing, just asking") is never knowledge about the user; a
 * request to the assistant (a reminder, a task, a question worded as an imperative) is not a
 * problem of the user's; and a plain report that something fails ("the checkout page keeps timing
 * out", "打印机一直卡纸") is one, with or without a problem word.
 *
 * These look at the form of a sentence — phatic words with nothing left over, an imperative
 * addressed to the assistant, a failure predicate — never at its topic. Pure; every pattern is
 * linear (lint's regexp/no-super-linear-* rules).
 */
import type { Lang } from './sentences';

/**
 * Phatic material: greetings, thanks, acknowledgements, laughter, "nothing, just asking". A clause
 * is small talk when removing these (and function words) leaves no content word.
 */
const EN_PHATIC =
  /\b(?:hi|hello|hey|heya|hiya|yo|howdy|good (?:morning|afternoon|evening|night)|morning|gm|gn|thanks|thank you|thx|ty|cheers|appreciate it|ok|okay|okey|k|kk|cool|nice|great|awesome|perfect|neat|sweet|got it|gotcha|understood|sounds good|alright|all right|sure|fine|lol|lmao|rofl|haha\w*|hehe\w*|heh|ha|yeah|yea|yep|yup|nope|nah|no worries|no problem|np|bye|goodbye|see you|see ya|later|talk (?:later|soon)|ttyl|never ?mind|nvm|nothing|not much|no reason|just asking|just curious|curious|just checking|checking in|saying hi|kidding|just kidding|messing around|killing time|popping in|bored|wondering|how's it going|how are you|what's up|sup|that's all|for now|anyway|oh|ah|eh|hmm|um|uh|wow|oops|sorry|my bad)\b/giu;
const EN_FUNCTION =
  /\b(?:i|i'm|i was|me|you|it|that|this|a|an|the|so|very|really|much|lot|a lot|just|only|too|all|to|for|of|and|or|but|then|now|there|here|again|still|also|well|mate|buddy|man|dude|guys)\b/giu;

const ZH_PHATIC =
  /你好|您好|[嗨嘿噢喔啊呀啦吧呢嘛哇诶哎]|哈喽|哈啰|早上好|早安|上午好|下午好|晚上好|晚安|在吗|在不在|谢谢|多谢|感谢|谢啦|辛苦了?|好的|好嘞|好滴|好吧|行吧|可以|收到|明白|知道了|了解|懂了|没事|没什么|没啥事?|不用了|算了|随便问问|随便看看|就问问|问问而已|打个招呼|聊两句|聊聊天?|聊天|无聊|闲着|回头聊|再聊|先这样|拜拜|再见|哈+|呵+|嘻+|嗯+|哦+/gu;
const ZH_FUNCTION = /就是?|[又也来你我了的好行是在那]|找你|今天|一下|一声|而已/gu;

const CLAUSE_SPLIT = /[,，.。!！?？~～;；:：、…\n]+/u;

function leftover(clause: string, lang: Lang): string {
  const zh = /\p{Script=Han}/u.test(clause);
  let rest = clause.toLowerCase();
  if (zh || lang === 'zh') rest = rest.replace(ZH_PHATIC, ' ').replace(ZH_FUNCTION, ' ');
  rest = rest.replace(EN_PHATIC, ' ').replace(EN_FUNCTION, ' ');
  return rest.replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * True when every clause of `text` is phatic: greeting, thanks, acknowledgement, laughter,
 * "nothing, just asking". "Thanks! I'm allergic to peanuts" is not (one clause has content).
 */
export function isSmallTalk(text: string, lang: Lang): boolean {
  const clauses = text.split(CLAUSE_SPLIT).map((c) => c.trim()).filter(Boolean);
  if (clauses.length === 0) return false;
  return clauses.every((c) => leftover(c, lang) === '');
}

/**
 * A request addressed to the assistant: an errand or lookup verb in the imperative ("Remind me…",
 * "Book a table…", "Could you look up…", "I need you to convert…"; "提醒我…", "帮我订…", "查一下…",
 * "给我列…"). Standing directives ("always…", "以后…") are instructions and not matched here.
 */
const EN_ERRAND =
  /^(?:(?:hey|ok(?:ay)?|so|and|also|oh),?\s+)?(?:please\s+|pls\s+|(?:can|could|would|will) you\s+(?:please\s+)?|i (?:need|want|'d like) you to\s+|i'd like you to\s+|go ahead and\s+)?(?:remind|ping|nudge|wake|alert|notify|set (?:a|an|up a|up an|me a)|add|put|book|reserve|order|buy|schedule|cancel|draft|write|compose|email|text|message|call|tell me|show me|give me|send|look up|search|find|check|convert|calculate|compute|work out|translate|summari[sz]e|list|plan|make (?:a|me)|create|note down|jot down)\b/iu;
const EN_STANDING = /\b(?:always|never|from now on|going forward|every time|whenever|in future|in the future)\b/iu;
const ZH_ERRAND =
  /^(?:[请你那]|麻烦)?(?:帮我|帮忙|替我|给我|帮着|记得提醒|提醒|叫我|喊我|查一下|查查|查个|搜一下|搜搜|告诉我|算一下|算算|订|预订|预约|安排|设个|设置|设一个|记一下|记下|列一个|写一封|发一条|打电话给)/u;
/** A leading time phrase ("明天下午三点", "下周一早上八点", "周五下午四点") before the request. */
const ZH_TIME_LEAD = /^(?:今天|明天|后天|大后天|今晚|明早|明晚|下周.|下个?星期.|周.|星期.|礼拜.|\d{1,2}月\d{1,2}[日号]?)?(?:早上|上午|中午|下午|傍晚|晚上|凌晨|夜里)?(?:[\d一二三四五六七八九十两]{1,3}[点:：](?:[\d一二三四五六七八九十]{1,2}分?|半|一刻)?)?(?:的时候)?(?:记得|请|麻烦)?/u;
const ZH_STANDING = /以后|今后|每次|总是|一直|从现在起|往后/u;
const ZH_REMIND_INSIDE = /提醒我|叫我一声|喊我一声|告诉我一声/u;

/** True when the sentence asks the assistant to do something (not a standing instruction). */
export function isRequestToAssistant(text: string, lang: Lang): boolean {
  const body = text.trim();
  if (lang === 'zh' || /\p{Script=Han}/u.test(body)) {
    if (ZH_STANDING.test(body)) return false;
    const rest = body.replace(ZH_TIME_LEAD, '');
    return ZH_ERRAND.test(rest) || ZH_REMIND_INSIDE.test(body);
  }
  return EN_ERRAND.test(body) && !EN_STANDING.test(body);
}

/**
 * A failure predicate: something the user relies on does not work. English: a breaking verb
 * ("fails", "keeps timing out", "crashes", "rejects", "gets stuck", "dies", "drains") or a
 * negated function ("won't start", "doesn't respond", "can't connect"). Chinese: a breaking
 * predicate (断线, 掉线, 报错, 失败, 卡纸, 死机, 闪退, 打不着, 连不上, 充不进, 没反应 …).
 */
const EN_FAILURE =
  /\b(?:(?:keeps?|kept)\s+(?:on\s+)?\w+ing|fail(?:s|ed|ing)?|error(?:s|ed|ing)? out|throws? (?:an? )?errors?|crash(?:es|ed|ing)?|times? out|timed out|timing out|hangs?|freez(?:es|ing)|froze|gets? stuck|got stuck|stuck|jam(?:s|med|ming)?|rejects?|rejected|drops?|dropped|leaks?|leaking|clogs?|clogged|backs? up|disconnects?|goes down|went down|stops? (?:working|responding)|stopped (?:working|responding)|logged out|logs me out|kicks me out|(?:won't|wont|doesn't|does not|didn't|can't|cannot|isn't|is not|never)\s+(?:\w+\s+)?(?:work|working|respond|start|load|loading|connect|open|turn on|boot|print|sync|save|cool|close|play|send|pair|install|update))\b/iu;
const ZH_FAILURE =
  /断线|断网|掉线|掉了|报错|出错|失败|卡纸|卡住|卡死|卡顿|死机|闪退|崩溃|崩了|宕机|挂了|坏了|不工作|不好使|没反应|不响应|连不上|登不上|登录不了|打不开|启动不了|开不了机|漏水|渗水|堵了|堵住|洗不干净|没信号|超时|丢包|花屏|黑屏|蓝屏|白屏|乱码|退出|进不去|用不了|收不到|发不出|打不出|不出水|不制冷|不加热|异响/u;
/** The user's own feeling or a plan is not a report of a failure ("我怕失败", "hope it doesn't crash"). */
const EN_NOT_REPORT = /\b(?:if|unless|hope|hopefully|afraid|worried|in case|might|may|could|would|what if|make sure|so that|before it)\b/iu;
const ZH_NOT_REPORT = /如果|要是|万一|担心|害怕|怕|希望|以免|防止|会不会|可能/u;

/** True when `text` plainly reports that something fails (no question, request or hypothetical). */
export function isFailureReport(text: string, lang: Lang): boolean {
  const body = text.trim();
  if (lang === 'zh' || /\p{Script=Han}/u.test(body)) return ZH_FAILURE.test(body) && !ZH_NOT_REPORT.test(body) && !isRequestToAssistant(body, 'zh');
  return EN_FAILURE.test(body) && !EN_NOT_REPORT.test(body) && !isRequestToAssistant(body, 'en');
}
