/**
 * What never enters the injected context (#23): small talk. A greeting, thanks or "lol nothing,
 * just asking" says nothing about the user, so a generic "what do you know about me" must not be
 * answered with it — the persona and the real memories answer that. An exchange whose user line is
 * small talk goes (the assistant's answer to a greeting is no knowledge either), and so does a
 * memory whose whole text is small talk (written before the extraction gate, or by an agent).
 */
import { isSmallTalk } from '../text/utterance-shape';
import { detectLang } from '../text/sentences';
import type { ExchangeCandidate } from './exchanges';

export function isSmallTalkText(text: string): boolean {
  return isSmallTalk(text, detectLang(text));
}

/** True when the exchange carries only small talk: its user line is phatic (or absent and the assistant's is). */
export function isFillerExchange(x: Pick<ExchangeCandidate, 'user' | 'assistant'>): boolean {
  const said = x.user?.content ?? x.assistant?.content;
  return said !== undefined && isSmallTalkText(said);
}

/** `items` without those whose text is small talk. */
export function withoutFiller<T>(items: readonly T[], text: (item: T) => string): T[] {
  return items.filter((i) => !isSmallTalkText(text(i)));
}
