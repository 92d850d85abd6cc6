/**
 * Groups the clauses of a user message into statements. A clause that a rule recognises starts
 * a new statement only when it stands on its own; elaborations ("吃了会起疹子"), consequences
 * ("so please never…"), anaphora ("it gives me heartburn") and emotional asides ("真的很急",
 * "It's really important to me.") stay with the statement they belong to.
 */
import { emotionScore } from '../emotion';
import type { Segmenter } from '../text/segmenter';
import { memoryTypesWhere } from '../memory-types';
import type { MemoryType, RelationRef } from '../types';
import { classifyClause } from './classify';
import { latinTokens } from './keywords';
import type { ClauseMatch } from './match';
import { imaginedSentences, isAdviceAsIfAssistant } from './hypotheticals';
import { type Lang, type Sentence, splitSentences, stripFiller } from './text';

/** One statement: a span of the message and the verdict of the clause that opened it. */
export interface Segment {
  start: number;
  end: number;
  match: ClauseMatch;
  relations: RelationRef[];
  subject?: string;
  /** True when any merged clause marks an event or short-lived state. */
  event: boolean;
}

const CONSEQUENCE = /^(?:so|and so|therefore|which means|hence|所以|因此|因而|这样的话|那么)(?![a-z])/iu;
const ANAPHORA = /^(?:it|it's|that|that's|this|these|those|which|they)\b|^(?:这(?!周|次|个月|个周末|个需求|个任务)|[那它他她])/iu;
const EXPLICIT_STANDING = /^(?:请|麻烦)?你?(?:以后|今后|往后|从现在(?:开始|起)|从今(?:以后|往后|天起))|^(?:please\s+)?(?:from now on|going forward|in (?:the )?future)/iu;
/** Events named by a verb in Chinese ("明天面试") still say something concrete. */
const EVENT_NOUN = /面试|考试|出差|体检|手术|开会|会议|婚礼|答辩|航班|约会|聚餐|生日|演出|比赛|复查|看病|加班|旅行|旅游|搬家|入职|离职|毕业|发布|上线|汇报/u;
/** "Can you remember that…?" is a statement wrapped in a question. */
const REMEMBER_REQUEST = /^(?:(?:can|could|would|will) you (?:please )?(?:remember|note|keep in mind)|please remember)\b|^你?(?:能|可以)?(?:帮我)?记(?:住|一下)/iu;
const NOW = /^(?:现在|如今|目前|now\b|these days\b|currently\b|nowadays\b)/iu;
const MAX_CLAUSE = 300;
const MAX_LEAD_IN = 40;
const MERGE_SAME_TYPE: ReadonlySet<MemoryType> = new Set(memoryTypesWhere((d) => d.joinsConsecutiveClauses));

/** Chinese content needs a noun-like word; a clause of verbs only ("我这周就去买来看看") is too vague. */
export function hasContent(text: string, lang: Lang, segmenter: Segmenter): boolean {
  if (latinTokens(text).length > 0 || /[《“「]/u.test(text)) return true;
  if (lang === 'en') return /[a-z]{3,}/iu.test(text);
  if (EVENT_NOUN.test(text)) return true;
  return segmenter.tag(text).some(
    (w) => (/^(?:n|vn|eng|j|nz|ns|nt|nr)/u.test(w.tag) || (w.tag === 'x' && /^\p{Script=Han}{2,}$/u.test(w.word))) && !/^(?:[我你事]|东西|时候)$/u.test(w.word),
  );
}

function startsNew(current: Segment, m: ClauseMatch, raw: string, body: string, lang: Lang, segmenter: Segmenter): boolean {
  if (current.match.intent === 'forget') return false;
  if (CONSEQUENCE.test(raw) || ANAPHORA.test(body)) return false;
  // An instruction right after a statement is usually its consequence ("我有高血压，吃东西要少盐").
  if (m.type === 'instruction' && current.match.type !== 'instruction' && !EXPLICIT_STANDING.test(body)) return false;
  if (m.type === current.match.type && MERGE_SAME_TYPE.has(m.type)) return false;
  if (m.intent === 'update' && current.match.intent === 'update') return false;
  // After an update, "现在…/now…" states the new value; a decision absorbs its elaboration ("改用 PostgreSQL").
  if (current.match.intent === 'update' && NOW.test(body)) return false;
  if (current.match.type === 'decision' && m.type !== 'instruction') return false;
  return hasContent(body, lang, segmenter);
}

function absorb(current: Segment, m: ClauseMatch | null, end: number): void {
  current.end = end;
  if (!m) return;
  for (const r of m.relations) {
    const same = current.relations.findIndex((x) => x.relation === r.relation && x.source === r.source);
    // In an update the later clause carries the new value ("搬回老家了，现在住在长沙").
    if (same >= 0 && current.match.intent === 'update') current.relations[same] = r;
    else if (same < 0) current.relations.push(r);
  }
  current.subject ??= m.subject;
  current.event ||= m.event;
}

/** In a hypothetical only what addresses the assistant stands: an instruction (not "if I were you…") or a forget request. */
function survivesHypothetical(m: ClauseMatch, sentence: Sentence): boolean {
  return m.intent === 'forget' || (m.type === 'instruction' && !isAdviceAsIfAssistant(sentence.text));
}

function segmentSentence(sentence: Sentence, lang: Lang, segmenter: Segmenter, out: Segment[], imagined: boolean): boolean {
  let current: Segment | undefined;
  let prefixStart: number | undefined;
  let opened = false;
  sentence.clauses.forEach((clause, i) => {
    const { text: body, cut } = stripFiller(clause.text, lang);
    // Pasted code or logs are not statements; long clauses also keep the regexes cheap.
    if (!body.trim() || body.length > MAX_CLAUSE) return;
    const isQuestion = sentence.question && i === sentence.clauses.length - 1;
    const withLeadIn = (): ClauseMatch | null =>
      // A rule may need the lead-in it was split from ("For this script, use Python 3").
      prefixStart !== undefined && !current && clause.start - prefixStart <= MAX_LEAD_IN
        ? classifyClause(sentence.text.slice(prefixStart - sentence.start, clause.end - sentence.start), lang, segmenter)
        : null;
    const read = classifyClause(body, lang, segmenter) ?? withLeadIn();
    const m = read && imagined && !survivesHypothetical(read, sentence) ? null : read;
    // The question itself is a request to the assistant; only a standing instruction, a forget
    // request or "can you remember that…" survives it.
    if (isQuestion && !((m?.type === 'instruction' && m.standing) || m?.intent === 'forget' || (m && REMEMBER_REQUEST.test(clause.text)))) return;
    if (m && (!current || startsNew(current, m, clause.text, body, lang, segmenter))) {
      current = { start: prefixStart ?? clause.start + cut, end: clause.end, match: m, relations: [...m.relations], subject: m.subject, event: m.event };
      out.push(current);
      opened = true;
      prefixStart = undefined;
    } else if (current) {
      absorb(current, m, clause.end);
    } else {
      prefixStart ??= clause.start + cut;
    }
  });
  return opened;
}

/** Splits a user message into statement segments (offsets into `content`). */
export function segmentMessage(content: string, lang: Lang, segmenter: Segmenter): Segment[] {
  const out: Segment[] = [];
  const sentences = splitSentences(content);
  const imagined = imaginedSentences(sentences, lang);
  sentences.forEach((sentence, i) => {
    const before = out.length;
    const opened = segmentSentence(sentence, lang, segmenter, out, imagined[i]!);
    const previous = out[before - 1];
    // A sentence with no statement of its own that only adds weight or refers back joins the last statement.
    if (!opened && previous && !sentence.question) {
      const body = stripFiller(sentence.text, lang).text;
      if (emotionScore(body).score > 0 || ANAPHORA.test(body)) previous.end = sentence.end;
    }
  });
  return out;
}
