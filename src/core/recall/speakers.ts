/**
 * Who said a line, and whether a query asks about one of the people who speak in the
 * conversation. A transcript written "Name: text" (an imported chat, a group chat, a meeting log;
 * "名字：内容" in Chinese) says its speaker in each line. A question about one of them ("what
 * instruments does Ana play?", "小林养了什么宠物") is answered by what that person told, in lines
 * that name no one, spread over many sessions — not by the questions that person asked the other
 * side ("What do you play?"), which are about the other side, nor by the answers those questions
 * got.
 *
 * Pure: no I/O.
 */
import type { StoredLine } from '../exchange-lines';
import { asksQuestion } from './exchanges';
import { candidateKeys } from './graph';

/**
 * A line's leading speaker name: one or two capitalised words, or two to four Han characters,
 * then a colon ("Ana: …", "Ana Li: …", "小林：…").
 */
const SPEAKER_PREFIX = /^\s*(?:([A-Z][\p{L}'’-]{0,30}(?: [A-Z][\p{L}'’-]{0,30})?):|(\p{Script=Han}{2,4})[:：])\s*/u;

/** The leading "Name:" of a line, as written, or undefined when the line does not start with one. */
export function lineSpeaker(content: string): string | undefined {
  const m = SPEAKER_PREFIX.exec(content);
  return m ? (m[1] ?? m[2]) : undefined;
}

/** The line without its leading "Name:" (unchanged when it has none). */
export function withoutSpeaker(content: string): string {
  return content.replace(SPEAKER_PREFIX, '');
}

/**
 * The speakers (of those given) the query names: the speaker's name or its first word ("Ana" for
 * "Ana Li"; "Ana's" names Ana) as a whole word of the query, compared in lower case; a Han name
 * anywhere in the query.
 */
export function speakersNamed(query: string, speakers: Iterable<string>): Set<string> {
  const keys = new Set(candidateKeys(query));
  const out = new Set<string>();
  for (const s of speakers) {
    const name = s.toLowerCase();
    if (keys.has(name) || keys.has(name.split(' ')[0]!)) out.add(s);
  }
  return out;
}

/** First-person words: a sentence with one speaks of its speaker. */
const FIRST_PERSON = /\b(?:I|I'm|I’m|I've|I’ve|I'd|I’d|I'll|I’ll|me|my|mine|myself|we|we're|we’re|we've|we’ve|us|our|ours)\b|[我咱俺]/iu;

/**
 * Whether a line tells about the one who says it rather than only asking the other side: it asks
 * nothing, or one of its clauses that states (does not ask) speaks in the first person. "I signed
 * up for pottery. Do you paint?" and "我昨天去爬山了，你呢？" do; "Wow, that rocks! What's your art
 * about?" and "你去哪儿了？" do not.
 */
export function speaksOfSelf(content: string): boolean {
  const text = withoutSpeaker(content);
  if (!/[?？]/u.test(text)) return true;
  const clauses = text.match(/[^.!?。！？…,，；;]+[.!?。！？…,，；;]*/gu) ?? [];
  return clauses.some((c) => !/[?？]/u.test(c) && FIRST_PERSON.test(c));
}

/** What a query about speakers changes in the ranking of candidate lines (message keys). */
export interface SpeakerFocus {
  /**
   * Per named speaker, their lines that end by telling, not asking: each set is one more ranking
   * that vouches for them, so every person a question joins has lines competing for the budget
   * ("what have Ana and Ben both played?" is answered by what each of them told).
   */
  tells: Set<string>[];
  /**
   * The named speakers' lines that only ask the other side: about the other side, they rank
   * nothing. Empty when the query names every speaker: then the other side is named too.
   */
  onlyAsks: Set<string>;
}

/**
 * The speaker focus of a query over candidate lines (by message key): undefined unless the lines
 * carry speakers and the query names some of them.
 */
export function speakerFocus(query: string, lines: ReadonlyMap<string, Pick<StoredLine, 'content'>>): SpeakerFocus | undefined {
  const speakerOf = new Map<string, string>();
  for (const [key, l] of lines) {
    const s = lineSpeaker(l.content);
    if (s !== undefined) speakerOf.set(key, s);
  }
  const speakers = new Set(speakerOf.values());
  const named = speakersNamed(query, speakers);
  if (named.size === 0) return undefined;
  const everyone = named.size === speakers.size;
  // One speaker alone among the candidates is no dialogue: nothing to prefer them over.
  if (everyone && named.size < 2) return undefined;
  const tells = new Map([...named].map((n) => [n, new Set<string>()]));
  const onlyAsks = new Set<string>();
  for (const [key, l] of lines) {
    const told = tells.get(speakerOf.get(key) ?? '');
    if (!told) continue;
    if (!speaksOfSelf(l.content)) {
      if (!everyone) onlyAsks.add(key);
    } else if (!asksQuestion(l.content)) told.add(key);
  }
  return { tells: [...tells.values()], onlyAsks };
}
