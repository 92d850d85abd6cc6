/**
 * What never enters the injected context (#23): small talk. A greeting, thanks or "lol nothing,
 * just asking" says nothing about the user, so a generic "what do you know about me" must not be
 * answered with it — the persona and the real memories answer that. An exchange whose user line is
 * small talk goes (the assistant's answer to a greeting is no knowledge either), and so does a
 * memory whose whole text is small talk (written before the extraction gate, or by an agent).
 *
 * An acknowledgement in reply to the assistant ("will do", "fingers crossed", "好主意，我去看看")
 * is small talk of the same kind for the context: the user states nothing, and what the assistant
 * proposed before it is kept as its own memory by extraction. It takes one of the few exchange
 * slots recall has, so a line that does state something is crowded out.
 */
import { boundedMemo, isShortText } from '../bounded-memo';
import { isSmallTalk } from '../text/utterance-shape';
import { detectLang } from '../text/sentences';
import type { ExchangeCandidate } from './exchanges';

/** Agreement, intention to act on a suggestion, hope, and "we'll see": replies that add no fact. */
const EN_ACK =
  /\b(?:(?:i )?will (?:do|try|let you know)|i'll (?:try|do that|do it|look|check|see|think about it|let you know)|i will|let's see|we'll see|hope so|i hope so|here's hoping|fingers crossed|(?:so )?true|exactly|agreed|same|me too|of course|definitely|absolutely|for sure|good (?:idea|call|point|thinking)|fair enough|(?:that )?makes sense|sounds like a plan|deal|yes please|yes|right|indeed|can't wait|noted|on it|not yet|maybe|probably|ugh|ooh|true that)\b/giu;
const ZH_ACK =
  /好主意|有道理|说得对|没错|确实|当然|同意|必须的?|一定|但愿|希望(?:吧|如此)?|也是|是[啊呀的]|对[啊呀的]?|没问题|记住了|我?(?:试试看?|试一下)|我?考虑(?:考虑|一下)|我?(?:去|回头)看看|(?:回头)?再说吧?|期待|等不及了?|嗯嗯|行/gu;
const CLAUSE_SPLIT = /[,，.。!！?？~～;；:：、…\n]+/u;

/**
 * Short texts already judged: every recall asks again about the memories it ranks, and the same
 * ones come back in a conversation's recalls (a dozen regular expressions each, on the path after
 * Chroma answers).
 */
export const isSmallTalkText = boundedMemo(
  20_000,
  (text) => isSmallTalk(text, detectLang(text)),
  isShortText,
);

/** True when every clause is small talk or an acknowledgement (see the module comment). */
export function isAcknowledgement(text: string): boolean {
  const lang = detectLang(text);
  const clauses = text
    .split(CLAUSE_SPLIT)
    .map((c) => c.trim())
    .filter(Boolean);
  if (clauses.length === 0) return false;
  return clauses.every((c) => {
    const rest = c.toLowerCase().replace(EN_ACK, ' ').replace(ZH_ACK, ' ');
    return rest.replace(/[^\p{L}\p{N}]+/gu, '') === '' || isSmallTalk(rest, lang);
  });
}

/** True when the exchange carries only small talk: its user line is phatic or an acknowledgement (or absent and the assistant's is phatic). */
export function isFillerExchange(x: Pick<ExchangeCandidate, 'user' | 'assistant'>): boolean {
  if (x.user?.content !== undefined) return isAcknowledgement(x.user.content);
  const said = x.assistant?.content;
  return said !== undefined && isSmallTalkText(said);
}

/** `items` without those whose text is small talk. */
export function withoutFiller<T>(items: readonly T[], text: (item: T) => string): T[] {
  return items.filter((i) => !isSmallTalkText(text(i)));
}
