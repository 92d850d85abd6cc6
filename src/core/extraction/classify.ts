/**
 * Classifies one clause of a user message with the rules of its language.
 */
import type { Segmenter } from '../text/segmenter';
import { EN_CHANGE_FIRST, EN_CHANGE_RULES, ZH_CHANGE_FIRST, ZH_CHANGE_RULES } from './changes';
import { EN_FACT_RULES } from './en-rules-facts';
import { EN_INTENT_RULES } from './en-rules-intent';
import { asHabit } from './habits';
import { makeMatch, type ClauseMatch } from './match';
import { detectResolution } from './resolution';
import { runRules } from './rule-kit';
import { isAboutSomeoneElse } from './subjects';
import { isFailureReport, isRequestToAssistant, isSmallTalk } from '../text/utterance-shape';
import type { Lang } from './text';
import { ZH_FACT_RULES } from './zh-rules-facts';
import { ZH_INTENT_RULES } from './zh-rules-intent';

/**
 * A clause about someone else says nothing about the user. Instructions and forget requests
 * are checked before this, because they address the assistant ("你以后…").
 */
const ZH_OTHER_SUBJECT = /^(?:[你您他她它谁这那]|他们|她们|它们|别人|大家|有人)/u;
const EN_OTHER_SUBJECT = /^(?:you|he|she|they|it|it's|there|that|that's|this is|what|who|how|why|where|when(?!(?:ever)?\s+(?:i|we)\b)|which)\b/iu;

/**
 * A resolution statement as a `resolve` match. An update rule that also reads the clause
 * ("咳嗽好了", "I don't get migraines anymore") keeps its type, importance and relations; the
 * intent becomes `resolve` (which supersedes like an update when no open pain point matches).
 * Forget requests and instructions stay what they are.
 */
function resolutionOf(text: string, lang: Lang, segmenter: Segmenter): ClauseMatch | null {
  const resolution = detectResolution(text, lang, segmenter);
  if (!resolution) return null;
  const ruled = runRules(lang === 'zh' ? ZH_INTENT_RULES : EN_INTENT_RULES, text, segmenter);
  if (ruled && ruled.intent !== 'update') return ruled;
  const subject = resolution.subject || undefined;
  if (ruled) return { ...ruled, rule: `${resolution.shape}+${ruled.rule}`, intent: 'resolve', subject: subject ?? ruled.subject };
  return { ...makeMatch(resolution.shape, { type: 'fact', intent: 'resolve', confidence: 0.85 }), subject };
}

/**
 * A change only waited for ("等我病好了…", "once my knee heals…") has not happened: no update
 * rule may read it as one.
 */
const WAITS_FOR_CHANGE = /^(?:等|等到)(?!不及)|^(?:once|as soon as|until|till)\b/iu;

/**
 * The verdict for a clause (fillers already stripped), or null when no rule applies. A habitual
 * "I use / do X" comes back as a standing preference (see ./habits.ts).
 */
export function classifyClause(clause: string, lang: Lang, segmenter: Segmenter): ClauseMatch | null {
  // Small talk is never knowledge about the user, whatever a rule would read into it (#23).
  if (isSmallTalk(clause, lang)) return null;
  const ruled = classifyByRules(clause, lang, segmenter);
  const verdict = ruled ? asHabit(ruled, clause, lang) : null;
  // A request to the assistant ("明天提醒我…", "remind me…") is not a problem of the user's.
  if (verdict?.type === 'pain_point' && isRequestToAssistant(clause, lang)) return null;
  // A plain report that something fails is a pain point even without a problem word; a habit
  // marker in it ("总是连到一半就掉了") does not make it a taste.
  if ((!verdict || (verdict.type === 'preference' && verdict.intent === 'assert')) && isFailureReport(clause, lang) && !isAboutSomeoneElse(clause, lang))
    return makeMatch('shape.failure', { type: 'pain_point', confidence: 0.8 });
  return verdict;
}

function classifyByRules(clause: string, lang: Lang, segmenter: Segmenter): ClauseMatch | null {
  const text = clause.trim();
  if (!text) return null;
  // "膝盖不疼了", "the app no longer crashes": a problem that is over, before any rule reads the
  // symptom as a new pain point or the change as a plain update.
  const resolved = resolutionOf(text, lang, segmenter);
  if (resolved) return resolved;
  if (lang === 'zh') {
    const intent = runRules(ZH_INTENT_RULES, text, segmenter);
    if (intent) return intent.intent === 'update' && WAITS_FOR_CHANGE.test(text) ? null : intent;
    if (ZH_OTHER_SUBJECT.test(text) && !/^这(?:周|个月|个周末|几天|两天|次)/u.test(text)) return null;
    // A change of the user's state (./changes.ts): a lead marker first ("从今天起…"), the rest when no fact rule reads it.
    // Bilingual users mix languages ("I love 火锅", "我用 Python"); an English-led clause gets the English rules too.
    return (
      runRules(ZH_CHANGE_FIRST, text, segmenter) ??
      runRules(ZH_FACT_RULES, text, segmenter) ??
      runRules(ZH_CHANGE_RULES, text, segmenter) ??
      (/^[A-Za-z]/u.test(text) ? classifyByRules(text, 'en', segmenter) : null)
    );
  }
  const intent = runRules(EN_INTENT_RULES, text, segmenter);
  if (intent) return intent.intent === 'update' && WAITS_FOR_CHANGE.test(text) ? null : intent;
  if (EN_OTHER_SUBJECT.test(text)) return null;
  return runRules(EN_CHANGE_FIRST, text, segmenter) ?? runRules(EN_FACT_RULES, text, segmenter) ?? runRules(EN_CHANGE_RULES, text, segmenter);
}
