/**
 * The daily digest's content, computed without a model: what was talked about today, which
 * important memories were touched, which questions were left open, and a few suggestions. The
 * template renders it bilingually; an LLM (when configured) only rewrites the same sections.
 */
import type { Segmenter } from '../text/segmenter';
import { indexTokens, STOPWORDS, termFrequencies } from '../text/tokenize';
import { languageOf, quoteSubject } from './nudge-wording';
import type { DigestSections } from '../ports/proactive';

// The digest repository's port stores the sections, so their shape lives with the port.
export type { DigestSections };

export interface DigestMessage {
  conversationId: string;
  role: 'user' | 'assistant';
  content: string;
  at: Date;
}

export interface DigestMemory {
  id: string;
  text: string;
  type: string;
  importanceLevel: string;
}

export interface DigestReminder {
  id: string;
  text: string;
  dueAt: Date;
}


const QUESTION = /[?？]\s*$|[吗呢吧么]\s*(?:[?？。]\s*)?$|^(?:怎么|如何|为什么|为啥|能不能|可不可以|是否|有没有|[哪谁几]|什么|多少)|怎么办|怎么样|是什么|^(?:how|what|why|when|where|which|who|can|could|should|would|is|are|do|does|did)\b/iu;
const UNSURE = /不确定|不知道|不清楚|我查一下|稍后(?:回复|告诉)|没有(?:足够|相关)信息|无法回答|i'?m not sure|i don'?t know|not certain|let me check|i can'?t (?:say|tell)|no information/iu;
const TOPIC_STOPWORDS = new Set(
  '我 你 他 她 它 我们 你们 的 了 是 在 和 就 都 也 还 要 不要 要不要 需要 会 能 吗 呢 吧 啊 哦 嗯 这 那 有 没 不 很 太 一下 一个 什么 怎么 今天 明天 昨天 觉得 可以 知道 好的 谢谢 哈哈 帮 给 把 被 让 跟 对 说 想 去 来 做 看 用 i you he she it we they me my your the a an and or but to of in on at for with is are was were be been do does did have has had not no yes so that this what how why when where can could should would will just really very about from as by ok okay thanks thank please'.split(' '),
);

/** True when a user message asks something. */
export function isQuestion(text: string): boolean {
  return QUESTION.test(text.trim());
}

/**
 * Questions the user asked today that were not answered: the last word of their conversation,
 * or followed only by an assistant reply that admits not knowing.
 */
export function findOpenQuestions(messages: readonly DigestMessage[]): DigestSections['openQuestions'] {
  const byConversation = new Map<string, DigestMessage[]>();
  for (const m of messages) {
    const list = byConversation.get(m.conversationId) ?? [];
    list.push(m);
    byConversation.set(m.conversationId, list);
  }
  const open: DigestSections['openQuestions'] = [];
  for (const [conversationId, list] of byConversation) {
    list.forEach((m, i) => {
      if (m.role !== 'user' || !isQuestion(m.content)) return;
      const replies: DigestMessage[] = [];
      for (let j = i + 1; j < list.length && list[j]!.role === 'assistant'; j++) replies.push(list[j]!);
      const answered = replies.length > 0 && !replies.every((r) => UNSURE.test(r.content));
      if (!answered) open.push({ conversationId, text: quoteSubject(m.content, 80), at: m.at.toISOString() });
    });
  }
  return open.sort((a, b) => a.at.localeCompare(b.at)).slice(0, 5);
}

/** How many conversations and messages, the most frequent content words, and each conversation's opening line. */
export function summarizeConversations(messages: readonly DigestMessage[], segmenter: Segmenter): DigestSections['conversations'] {
  const conversations = new Map<string, DigestMessage[]>();
  const counts = new Map<string, number>();
  for (const m of messages) {
    const list = conversations.get(m.conversationId) ?? [];
    list.push(m);
    conversations.set(m.conversationId, list);
    if (m.role !== 'user') continue;
    for (const [term, tf] of termFrequencies(indexTokens(m.content, segmenter))) {
      if (STOPWORDS.has(term) || TOPIC_STOPWORDS.has(term) || [...term].length < 2 || /^\d+$/.test(term)) continue;
      counts.set(term, (counts.get(term) ?? 0) + tf);
    }
  }
  // The tokenizer emits "payment-svc" and also its parts; the compound is the topic.
  const topics: string[] = [];
  for (const [term] of [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0].length - a[0].length || a[0].localeCompare(b[0]))) {
    if (topics.length >= 5) break;
    if (!topics.some((t) => t.includes(term))) topics.push(term);
  }
  const highlights = [...conversations.values()]
    .map((list) => list.find((m) => m.role === 'user'))
    .filter((m): m is DigestMessage => m !== undefined)
    .slice(0, 5)
    .map((m) => quoteSubject(m.content, 60));
  return { count: conversations.size, messages: messages.length, topics, highlights };
}

/** A few next steps a friend would suggest: tomorrow's reminders, open questions, active pain points and goals. */
export function buildSuggestions(input: {
  lang: 'zh' | 'en';
  openQuestions: number;
  painPoints: readonly DigestMemory[];
  goals: readonly DigestMemory[];
  tomorrow: readonly DigestReminder[];
  timeZone: string;
}): string[] {
  const zh = input.lang === 'zh';
  const out: string[] = [];
  const time = (d: Date) => d.toLocaleTimeString(zh ? 'zh-CN' : 'en-GB', { hour: '2-digit', minute: '2-digit', timeZone: input.timeZone });
  for (const r of input.tomorrow.slice(0, 2)) {
    out.push(zh ? `明天 ${time(r.dueAt)} 有「${quoteSubject(r.text)}」，今晚可以先准备一下。` : `Tomorrow at ${time(r.dueAt)}: "${quoteSubject(r.text)}" — maybe get ready tonight.`);
  }
  if (input.openQuestions > 0) {
    out.push(zh ? `今天还有 ${input.openQuestions} 个问题没有答案，明天可以接着聊。` : `${input.openQuestions} question${input.openQuestions > 1 ? 's' : ''} from today still ${input.openQuestions > 1 ? 'have' : 'has'} no answer — we can pick ${input.openQuestions > 1 ? 'them' : 'it'} up tomorrow.`);
  }
  const pain = input.painPoints[0];
  if (pain) out.push(zh ? `「${quoteSubject(pain.text)}」还在困扰你，要不要明天专门花点时间处理？` : `"${quoteSubject(pain.text)}" is still bothering you — worth setting time aside tomorrow?`);
  const goal = input.goals[0];
  if (goal) out.push(zh ? `别忘了你的目标：「${quoteSubject(goal.text)}」。明天推进一小步？` : `Keep your goal in sight: "${quoteSubject(goal.text)}". One small step tomorrow?`);
  return out.slice(0, 4);
}

/** The language most of the user's own words today were in (zh on a tie: the product's default). */
export function dominantLanguage(messages: readonly DigestMessage[], memories: readonly DigestMemory[]): 'zh' | 'en' {
  let zh = 0;
  let en = 0;
  for (const t of [...messages.filter((m) => m.role === 'user').map((m) => m.content), ...memories.map((m) => m.text)]) {
    if (languageOf(t) === 'zh') zh++;
    else en++;
  }
  return en > zh ? 'en' : 'zh';
}

/** The digest as plain text: bilingual headings, content in the user's words. */
export function renderDigestTemplate(s: DigestSections): string {
  const zh = s.lang === 'zh';
  const lines: string[] = [zh ? `📅 ${s.date} 每日摘要 / Daily digest` : `📅 Daily digest for ${s.date} / 每日摘要`];
  lines.push('', zh ? '💬 今日对话 / Conversations' : "💬 Today's conversations / 今日对话");
  if (s.conversations.count === 0) lines.push(zh ? '今天没有聊天。' : 'No conversations today.');
  else {
    lines.push(zh ? `共 ${s.conversations.count} 次对话、${s.conversations.messages} 条消息。` : `${s.conversations.count} conversation${s.conversations.count > 1 ? 's' : ''}, ${s.conversations.messages} messages.`);
    if (s.conversations.topics.length > 0) lines.push(`${zh ? '话题' : 'Topics'}: ${s.conversations.topics.join(zh ? '、' : ', ')}`);
    for (const h of s.conversations.highlights) lines.push(`- ${h}`);
  }
  lines.push('', zh ? '⭐ 重要记忆 / Important memories' : '⭐ Important memories / 重要记忆');
  if (s.importantMemories.length === 0) lines.push(zh ? '今天没有新的重要记忆。' : 'Nothing important was added or touched today.');
  for (const m of s.importantMemories) lines.push(`- [${m.type}|${m.importanceLevel}] ${m.text}`);
  if (s.escalatedMemories && s.escalatedMemories.length > 0) {
    lines.push('', zh ? '📈 越来越重要 / Rising in importance' : '📈 Rising in importance / 越来越重要');
    for (const m of s.escalatedMemories) lines.push(`- [${m.type}|${m.fromLevel}→${m.toLevel}] ${m.text}`);
  }
  lines.push('', zh ? '❓ 待解答 / Open questions' : '❓ Open questions / 待解答');
  if (s.openQuestions.length === 0) lines.push(zh ? '没有悬而未决的问题。' : 'No open questions.');
  for (const q of s.openQuestions) lines.push(`- ${q.text}`);
  lines.push('', zh ? '💡 建议 / Suggestions' : '💡 Suggestions / 建议');
  if (s.suggestions.length === 0) lines.push(zh ? '好好休息，明天见。' : 'Rest well — see you tomorrow.');
  for (const x of s.suggestions) lines.push(`- ${x}`);
  return lines.join('\n');
}
