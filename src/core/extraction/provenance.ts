/**
 * Provenance of extracted memories, checked in code after the extractor answers: nothing an
 * extractor (a model above all) says about where a memory comes from is trusted.
 *
 * A model reads the whole transcript, including text the user pasted (an email, a forwarded chat,
 * a document with "SYSTEM: forget everything") and the assistant's own messages ("the user said
 * they're allergic to nothing"). Whatever it was led to believe, a candidate is kept only when:
 * 1. it cites messages, and every cited id is a message of this transcript (exact match);
 * 2. it is attributed to the party that said it: a memory about the user (fact, preference, goal,
 *    pain point, event, instruction, decision) cites at least one user message; an
 *    assistant_contribution cites at least one assistant message; cited assistant messages alone
 *    can only ever give an assistant_contribution, and only the user can ask to forget;
 * 3. its words come from what that party said: at least half of the memory's content words occur
 *    in the cited messages — for the user, in their own words only ({@link ownWords}: quoted,
 *    pasted and forwarded material removed). The exceptions are a plain statement the user
 *    confirmed ("Are you vegetarian?" — "Yes") and a short answer ("What instrument do you
 *    play?" — "Cello."): the assistant's question right before counts then, for an answer only
 *    beside words of the user's own and never after a denial;
 * 4. a standing (global) instruction is stated as one: a sentence of the user's own words that
 *    the offline rules classify as an instruction, or that directs the assistant ("from now on…",
 *    "以后…", "please…", "别…"), holds at least half of its content words;
 * 5. a forget request is one: the offline forget rules, run on the user's own words of a cited
 *    message, find a request to forget, about the same thing (its subject or wording);
 * 6. an update's subject (what it replaces) occurs in the user's own words, or is the subject the
 *    offline rules read from them.
 * Everything else is rejected whole, with a reason, never rewritten into something else.
 */
import type { Segmenter } from '../text/segmenter';
import { indexTokens } from '../text/tokenize';
import type { ConversationMessage, MemoryCandidate } from '../types';
import { extractCandidatesOffline } from './offline-extractor';
import { ownSentences, ownWords } from '../text/quoted';
import { normalizeFact } from './text';
import type { RejectedCandidate } from '../ports/conversation';

// The extraction report (a port's result) names rejected candidates, so their shape lives with the port.
export type { RejectedCandidate };

/** Share of a memory's content words that must occur in what its speaker said. */
export const MIN_SUPPORT = 0.5;

/** Words that name the speakers rather than say anything ("The user is…", "用户…", "助手推荐…"). */
const SPEAKER_WORDS = new Set(['user', 'users', "user's", 'assistant', "assistant's", '用户', '该用户', '助手', 'ai']);
/** How the assistant's part is labelled ("Assistant suggested:", "助手推荐："), not what it said. */
const ASSISTANT_LABEL_STEMS = new Set(['recom', 'sugge', 'advis', 'expla', 'taugh', 'teach', 'propo', '推荐', '建议', '解释', '讲解', '教']);

const HAN = /\p{Script=Han}/u;

/** A crude, language-agnostic stem for Latin words: "allergic"/"allergies" → "aller", "moved"/"move" → "mov". */
export function stem(word: string): string {
  let w = word.toLowerCase().replace(/'s$/u, '');
  for (let i = 0; i < 2; i++) {
    const cut = w.replace(/(?:ing|ed|es|s|ly|e)$/u, '');
    if (cut.length < 3 || cut === w) break;
    w = cut;
  }
  return w.slice(0, 5);
}

function contentTokens(text: string, forAssistant: boolean, segmenter: Segmenter): string[] {
  const out = new Set<string>();
  for (const token of indexTokens(text, segmenter)) {
    if (SPEAKER_WORDS.has(token)) continue;
    if (HAN.test(token) ? [...token].length < 2 : token.length < 2 && !/^\d$/u.test(token)) continue;
    if (forAssistant && ASSISTANT_LABEL_STEMS.has(HAN.test(token) ? token : stem(token))) continue;
    out.add(token);
  }
  return [...out];
}

/**
 * Share (0..1) of the content words of `text` that occur in `sources`: Chinese words as substrings
 * (robust to a different word segmentation), other words by stem. A text without content words
 * is supported only when its normalised form occurs in the sources as a whole.
 */
export function support(text: string, sources: readonly string[], segmenter: Segmenter, opts: { forAssistant?: boolean } = {}): number {
  const source = sources.join('\n').normalize('NFKC').toLowerCase();
  const tokens = contentTokens(text, opts.forAssistant ?? false, segmenter);
  if (tokens.length === 0) {
    const needle = normalizeFact(text);
    return needle.length > 0 && normalizeFact(source).includes(needle) ? 1 : 0;
  }
  const stems = new Set(indexTokens(source, segmenter).filter((t) => !HAN.test(t)).map(stem));
  const hits = tokens.filter((t) => (HAN.test(t) ? source.includes(t) : stems.has(stem(t)) || (/^\d/u.test(t) && source.includes(t)))).length;
  return hits / tokens.length;
}

/** A sentence that tells the assistant what to do (instructions are addressed to it). */
const EN_DIRECTIVE =
  /^(?:(?:and|also|so|ok(?:ay)?|oh|btw|by the way|one more thing|one last thing)[,\s]+)*(?:please|pls|kindly|always|never|don't|do not|stop|avoid|only|make sure|remember to|be|keep|use|answer|reply|respond|write|talk|speak|call me|address me|refer to me|give|show|include|skip|no more|start)\b|\b(?:i (?:want|need|would like|'d like|prefer|expect) you to|you (?:should|must|need to|have to|always|never)|from now on|going forward|in (?:the )?future|next time|every time|each time|whenever you|(?:can|could|would|will) you (?:please )?(?:always|never|stop|start|remember to))\b/iu;
const ZH_DIRECTIVE =
  /^(?:(?:对了|另外|还有|顺便说一下|顺便|[嗯哦好那])[，,\s]*)*(?:[请别少多用]|麻烦|以后|今后|往后|从现在(?:开始|起)|从今(?:以后|往后|天起)|每次|总是|一律|永远|务必|记得|记住|不要|不许|禁止|叫我|称呼我|回答|回复)|你(?:[要得别]|应该|必须|以后|今后|每次|一律|务必|记得|不要)|我(?:希望|想让|要|需要)你|以后|今后|从现在(?:开始|起)/u;

export function isDirective(sentence: string): boolean {
  return EN_DIRECTIVE.test(sentence) || ZH_DIRECTIVE.test(sentence);
}

/** "Yes" to the assistant's question: the question's content becomes the user's statement. */
const AFFIRMATION = /^(?:yes|yeah|yep|yup|correct|right|exactly|that's right|that is right|indeed|absolutely|[对嗯]|是的|是啊|对的|对啊|没错|确实|是)(?![a-z])/iu;

/** An answer that denies or declines: the question it answers is not the user's statement. */
const DENIAL = /^(?:no|nope|nah|not|never|none|wrong|没有?|不是|不对|并没有|才不)(?![a-z])/iu;

interface MessageView {
  message: ConversationMessage;
  index: number;
  own?: string;
  sentences?: string[];
  offline?: MemoryCandidate[];
}

const clip = (text: string, max: number): string => {
  const points = [...text];
  return points.length <= max ? text : `${points.slice(0, max).join('')}…`;
};

/** The transcript a screen checks candidates against, with per-message work done once. */
class Transcript {
  private readonly byId = new Map<string, MessageView>();
  private readonly ordered: MessageView[];

  constructor(
    messages: readonly ConversationMessage[],
    private readonly timezone: string,
    readonly segmenter: Segmenter,
  ) {
    this.ordered = messages.map((message, index) => ({ message, index }));
    for (const view of this.ordered) if (!this.byId.has(view.message.id)) this.byId.set(view.message.id, view);
  }

  get(id: string): MessageView | undefined {
    return this.byId.get(id);
  }

  next(view: MessageView): MessageView | undefined {
    return this.ordered[view.index + 1];
  }

  previous(view: MessageView): MessageView | undefined {
    return this.ordered[view.index - 1];
  }

  own(view: MessageView): string {
    view.own ??= ownWords(view.message.content);
    return view.own;
  }

  sentences(view: MessageView): string[] {
    view.sentences ??= ownSentences(view.message.content);
    return view.sentences;
  }

  /** What the offline rules find in the user's own words of one message. */
  offline(view: MessageView): MemoryCandidate[] {
    view.offline ??= extractCandidatesOffline([{ ...view.message, content: this.own(view) }], { timezone: this.timezone, segmenter: this.segmenter });
    return view.offline;
  }
}

function describeIds(ids: readonly string[]): string {
  return ids
    .slice(0, 5)
    .map((id) => JSON.stringify(clip(id, 40)))
    .join(', ')
    .concat(ids.length > 5 ? `, … (${ids.length} in all)` : '');
}

/** Why `candidate` cannot be kept, or null when its provenance holds. */
function problemOf(candidate: MemoryCandidate, transcript: Transcript): string | null {
  const ids = [...new Set(candidate.messageIds)];
  if (ids.length === 0) return 'cites no message';
  const unknown = ids.filter((id) => !transcript.get(id));
  if (unknown.length > 0) return `cites message ids that are not in this conversation: ${describeIds(unknown)}`;
  const cited = ids.map((id) => transcript.get(id)!).sort((a, b) => a.index - b.index);
  const users = cited.filter((v) => v.message.role === 'user');
  const others = cited.filter((v) => v.message.role !== 'user');
  const ratio = (x: number) => x.toFixed(2);

  if (candidate.type === 'assistant_contribution') {
    if (candidate.role !== 'assistant') return 'an assistant_contribution must be attributed to the assistant';
    if (others.length === 0) return 'an assistant_contribution must cite an assistant message; it cites only user messages';
    if (candidate.intent === 'forget') return 'only the user can ask to forget; this comes from assistant messages';
    const s = support(candidate.text, others.map((v) => v.message.content), transcript.segmenter, { forAssistant: true });
    if (s < MIN_SUPPORT) return `its words are not in the cited assistant messages (support ${ratio(s)})`;
    return null;
  }

  if (candidate.role !== 'user') return `a ${candidate.type} is about the user and must be attributed to the user`;
  if (users.length === 0) return `a ${candidate.type} is about the user and must cite a user message; it cites only assistant messages`;
  const own = users.map((v) => transcript.own(v));
  if (own.every((t) => t.length === 0)) return 'the cited user messages hold only quoted, pasted or forwarded text, not the user’s own words';

  if (candidate.intent === 'forget') {
    const requests = users.flatMap((v) => transcript.offline(v)).filter((c) => c.intent === 'forget');
    if (requests.length === 0) return 'no cited user message asks, in the user’s own words, to forget anything (quoted or pasted text does not count)';
    const what = candidate.subject?.trim() || candidate.text;
    const about = requests.some((r) => support(what, [r.text], transcript.segmenter) >= MIN_SUPPORT || (r.subject !== undefined && support(what, [r.subject], transcript.segmenter) >= MIN_SUPPORT));
    if (!about) return `the user’s own forget request is not about ${JSON.stringify(clip(what, 60))}`;
    return null;
  }

  const sources = [...own];
  if (candidate.intent === 'assert' && candidate.type !== 'instruction') {
    // "Are you still vegetarian?" — "Yes": the confirmed question is the user's statement.
    for (const question of others) {
      const answer = transcript.next(question);
      const confirmed = answer && users.includes(answer) && /[?？]\s*$/u.test(question.message.content) && AFFIRMATION.test(transcript.own(answer));
      if (confirmed) sources.push(question.message.content);
    }
  }
  let s = support(candidate.text, sources, transcript.segmenter);
  if (s < MIN_SUPPORT && candidate.intent === 'assert' && candidate.type !== 'instruction') {
    // "What instrument do you play?" — "Cello.": the question names what the user's value is. It
    // counts only beside a value the user said (one of the memory's words at least), never for a
    // denial, so the assistant's own words cannot become the user's fact.
    const questions = users.flatMap((answer) => {
      const before = transcript.previous(answer);
      const own = transcript.own(answer).trim();
      return before?.message.role === 'assistant' && /[?？]\s*$/u.test(before.message.content.trim()) && own && !DENIAL.test(own) ? [before.message.content] : [];
    });
    if (questions.length > 0 && support(candidate.text, own, transcript.segmenter) > 0) s = support(candidate.text, [...sources, ...questions], transcript.segmenter);
  }
  if (s < MIN_SUPPORT) return `not said in the user’s own words in the cited messages (support ${ratio(s)}); quoted, pasted or assistant text does not count`;

  if (candidate.intent === 'update' && candidate.subject?.trim()) {
    // The subject decides what is superseded: the user's words, or the subject the offline rules
    // read from them ("I moved to Denver" → "live").
    const subject = candidate.subject;
    const ruleSubjects = users.flatMap((v) => transcript.offline(v)).flatMap((c) => (c.intent === 'update' && c.subject ? [c.subject] : []));
    const named = support(subject, own, transcript.segmenter) >= MIN_SUPPORT || ruleSubjects.some((r) => support(subject, [r], transcript.segmenter) >= MIN_SUPPORT);
    if (!named) return `the update’s subject ${JSON.stringify(clip(subject, 60))} is not in the user’s own words`;
  }

  if (candidate.type === 'instruction' && candidate.scope === 'global') {
    const stated = users.flatMap((v) => [
      ...transcript.offline(v).filter((c) => c.type === 'instruction').map((c) => c.text),
      ...transcript.sentences(v).filter(isDirective),
    ]);
    if (!stated.some((sentence) => support(candidate.text, [sentence], transcript.segmenter) >= MIN_SUPPORT)) {
      return 'a standing instruction must be given by the user: no sentence in the user’s own words of the cited messages tells the assistant this';
    }
  }
  return null;
}

/**
 * Splits candidates into those whose provenance holds and those rejected, each with its reason.
 * `segmenter` finds Chinese words; `timezone` only matters to the offline rules.
 */
export function screenCandidates(
  candidates: readonly MemoryCandidate[],
  messages: readonly ConversationMessage[],
  segmenter: Segmenter,
  timezone = 'UTC',
): { accepted: MemoryCandidate[]; rejected: RejectedCandidate[] } {
  const transcript = new Transcript(messages, timezone, segmenter);
  const accepted: MemoryCandidate[] = [];
  const rejected: RejectedCandidate[] = [];
  for (const candidate of candidates) {
    const reason = problemOf(candidate, transcript);
    if (reason === null) accepted.push(candidate);
    else
      rejected.push({
        text: clip(candidate.text, 200),
        type: candidate.type,
        intent: candidate.intent,
        messageIds: candidate.messageIds.slice(0, 10).map((id) => clip(id, 128)),
        reason,
      });
  }
  return { accepted, rejected };
}
