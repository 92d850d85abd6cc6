/**
 * The user's own words in a message: what is left once quoted, pasted or forwarded material is
 * taken out. A user message often carries text that is not the user speaking — an email to be
 * answered, a colleague's chat, a document to translate, a transcript with "SYSTEM:" lines — and
 * none of it may become the user's fact, standing instruction or forget request.
 *
 * The rules are about the shape of quoting, not about what the quoted text says:
 * - fenced code blocks (``` or ~~~) and lines starting with ">" (mail quoting) are material;
 * - a lead-in that introduces material ends the user's own words: a colon after a reporting verb
 *   ("he said:", "老板说："), a document noun ("the email:", "邮件如下："), a processing task
 *   ("translate this:", "帮我润色："), or a line naming pasted material ("Here's the email I got",
 *   "以下是同事转发的消息") — everything after it, to the end of the message, is material;
 * - a speaker label or chat-template marker ("SYSTEM:", "Assistant:", "用户：", "<|im_start|>",
 *   "[INST]") and mail headers ("From:", "发件人：") start a transcript or a forwarded mail: the
 *   rest of the message is material;
 * - a quoted span ("…", “…”, 「…」, 『…』, «…») is material when it reads as someone's sentence: it
 *   follows a reporting verb, holds sentence punctuation, or is long. Short quoted terms and titles
 *   ("dark mode", “深度工作”) stay the user's own words.
 * Cutting to the end of the message is deliberately conservative: a request the user writes after
 * pasted material is lost rather than material being taken for the user's request.
 */

/** Reporting verbs (someone else's words follow). "I said:" / "我说：" is the user speaking and is not listed. */
const REPORT_EN =
  /\b(?:said|says|wrote|writes|told (?:me|us|him|her|them)|tells (?:me|us)|asked|asks|replied|replies|answered|texted|messaged|emailed|posted|tweeted|commented|forwarded|forwarding|fwd|fw|pasted|pasting|copied|quoted?|quoting|reads|goes like|put it)\b|\b(?:got|received|sent me|came)\b.*\bfrom\b|\bfrom\s+(?:my|his|her|their|our|the|a|an)\s+[\w' -]{1,30}$/iu;
const REPORT_ZH = /(?<!我[想要再就只先又也]?)(?:说|讲)(?:道|过|的是)?$|写道|写着|写的是|表示|回复说|回复道|问道|转发|转述|引用|原话|原文|粘贴|复制|抄送|来信|收到|发来|发给我|转来|寄来/u;
/** Documents and messages that are pasted rather than spoken. */
const DOC_NOUN_EN =
  '(?:e-?mails?|mails?|messages?|msgs?|letters?|memos?|documents?|docs?|articles?|posts?|comments?|reviews?|logs?|transcripts?|threads?|chats?|notices?|announcements?|sms|dms?|tweets?|prompts?|excerpts?|snippets?|paragraphs?|passages?|notifications?)';
/** A document named as a thing at hand ("this email", "an email from my landlord", "my boss's message", or just "Email"). */
const DOC_EN = new RegExp(
  `\\b(?:this|that|the|an?|his|her|their|these|those|following|below|attached|pasted|forwarded|\\w+'s)\\s+(?:[\\w-]+\\s+){0,2}?${DOC_NOUN_EN}\\b|^(?:[\\w-]+'s\\s+)?${DOC_NOUN_EN}$`,
  'iu',
);
const DOC_NOUN_ZH = '(?:邮件|信件|来信|消息|短信|微信|私信|文章|文档|帖子|评论|通知|公告|日志|聊天记录|对话记录|提示词|段落|片段|原文|截图)';
const DOC_ZH = new RegExp(
  `(?:这|那|一|以下|如下|下面)(?:封|条|段|篇|份|则|个)?.{0,8}?${DOC_NOUN_ZH}|(?:发来|发给我|转来|收到|写)的.{0,8}?${DOC_NOUN_ZH}|${DOC_NOUN_ZH}(?:如下|内容|原文|是这样)|^(?:.{0,8}的)?${DOC_NOUN_ZH}$`,
  'u',
);
/** Tasks whose object is material, not a statement ("translate this:", "帮我润色："). */
const TASK_EN =
  /\b(?:translate|proofread|rephrase|paraphrase|(?:summari[sz]e|rewrite|polish|review|check|fix|answer|reply to|respond to) (?:this|that|these|it|the following|below|the \w+))\b|\bdraft a (?:reply|response|answer)\b/iu;
const TASK_ZH = /翻译|校对|润色|改写|帮我(?:总结|概括|润色|改写|校对|回复|分析|看看|检查|改)|(?:总结|概括)(?:一下)?(?:这|以下|下面)/u;
/** Words that point at material below ("here's", "以下", "the following"). */
const DEIXIS = /\b(?:here(?:'s| is| are)|below|the following|following|attached|pasted|forwarded|fwd|fw)\b|以下|如下|下面|附上|转发/iu;

/**
 * Speaker labels and chat-template markers: a transcript starts here. The spaces after a sentence
 * end are read forward, not in a `(?<=[.!?]\s*)` look-behind that rescanned the run at every
 * position (quadratic on a long run of spaces, issue #20); a line break is the `^` case.
 */
const SPEAKER_LABEL =
  /(?:^|(?<=[.!?。！？]))[ \t\u3000\u00a0]*(?:#+\s*)?(?:\*\*)?(?:system|assistant|user|human|ai|bot|developer|admin|administrator|系统|系统提示|助手|用户|人类|管理员|机器人|客服)(?:\*\*)?\s*[:：]/imu;
const TEMPLATE_MARKER = /<\|?\s*(?:im_start|im_end|system|assistant|user|endoftext)\s*\|?>|\[\/?(?:inst|system|sys)\]|<<\/?sys>>|<\/?(?:system|assistant|user|instructions?)>/iu;
/** The sender line of a forwarded mail, or its banner. */
const MAIL_HEADER = /^[ \t]*(?:from|sender|发件人)\s*[:：]/imu;
const FORWARD_BANNER = /^[ \t]*[-=_*]{2}.*(?:forwarded|original message|转发|原始邮件).*$/imu;

const FENCE = /(?:```|~~~)[\s\S]*?(?:```|~~~|$)/gu;
const MAIL_QUOTE_LINE = /^[ \t]*[>＞].*$/gmu;
/**
 * A span holds no opener of its own kind: an attempt at an unclosed opener stops at the next one
 * instead of reading 4000 characters from every opener (quadratic on "“““…", issue #20), and
 * nested same-kind quotes were never paired by these spans anyway.
 */
const QUOTE_SPANS = [/"([^"\n]{1,4000})"/gu, /“([^“”]{1,4000})”/gu, /「([^「」]{1,4000})」/gu, /『([^『』]{1,4000})』/gu, /«([^«»]{1,4000})»/gu];
/** A sentence boundary inside a quote: terminal punctuation then more words, not after "Mr"/"Dr"… */
const INNER_SENTENCE_END = /(?<!\b(?:mr|mrs|ms|dr|st|vs|jr|sr|no))[.!?。！？；;]\s*\S/iu;
const LEAD_IN_MAX = 100;

function isLeadIn(lead: string): boolean {
  const text = lead.trim();
  if (!text || text.length > LEAD_IN_MAX) return false;
  return REPORT_EN.test(text) || REPORT_ZH.test(text) || DOC_EN.test(text) || DOC_ZH.test(text) || TASK_EN.test(text) || TASK_ZH.test(text);
}

/** Where the material that runs to the end of the message starts, or the length when there is none. */
function materialStart(text: string): number {
  let cut = text.length;
  const take = (at: number) => {
    if (at >= 0 && at < cut) cut = at;
  };
  for (const re of [SPEAKER_LABEL, TEMPLATE_MARKER, MAIL_HEADER, FORWARD_BANNER]) {
    const m = re.exec(text);
    if (m) take(m.index);
  }
  let lineStart = 0;
  for (const line of text.split('\n')) {
    // "he said: …" / "邮件如下：" — the colon ends the lead-in; the lead-in starts at the last sentence end.
    for (const colon of line.matchAll(/[:：]/gu)) {
      const before = line.slice(0, colon.index);
      const sentenceStart = Math.max(...['.', '!', '?', '。', '！', '？', '；', ';'].map((p) => before.lastIndexOf(p))) + 1;
      if (isLeadIn(before.slice(sentenceStart))) {
        take(lineStart + colon.index + 1);
        break;
      }
    }
    // "Here's the email I got" / "以下是同事转发的消息" on a line of its own, material on the next lines.
    const trimmed = line.trim();
    if (trimmed && trimmed.length <= LEAD_IN_MAX && DEIXIS.test(trimmed) && isLeadIn(trimmed) && !/[.!?。！？]$/u.test(trimmed)) {
      take(lineStart + line.length);
    }
    lineStart += line.length + 1;
  }
  return cut;
}

function isReportedQuote(text: string, openAt: number, body: string): boolean {
  const before = text.slice(Math.max(0, openAt - 40), openAt);
  const sentence = before.split(/[.!?。！？\n]/u).pop() ?? '';
  if (REPORT_EN.test(sentence) || /[说讲问]|写道|写着|表示|回复|告诉/u.test(sentence)) return true;
  if (INNER_SENTENCE_END.test(body.trim()) || /[.!?。！？]$/u.test(body.trim())) return true;
  const words = body.split(/\s+/u).filter((w) => /\p{L}/u.test(w)).length;
  const han = body.match(/\p{Script=Han}/gu)?.length ?? 0;
  return words >= 12 || han >= 20;
}

/**
 * The user's own words in `content`, with quoted, pasted and forwarded material removed (each
 * removed part leaves a line break, so sentences on either side stay apart).
 */
export function ownWords(content: string): string {
  let text = content.replace(/\r\n?/gu, '\n').replace(FENCE, '\n');
  text = text.slice(0, materialStart(text));
  text = text.replace(MAIL_QUOTE_LINE, '');
  for (const re of QUOTE_SPANS) {
    text = text.replace(re, (whole: string, body: string, offset: number, all: string) => (isReportedQuote(all, offset, body) ? '\n' : whole));
  }
  return text.replace(/\n{2,}/gu, '\n').trim();
}

/** The own words split into sentences (also at line breaks), for rules that look at one statement. */
export function ownSentences(content: string): string[] {
  return ownWords(content)
    .split(/(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
