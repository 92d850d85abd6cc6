/**
 * Every extractor and parser of src/core that reads user or model text, each as a function of
 * one string, for the fuzz test (test/fuzz-extractors.test.ts) and for the pattern collector of
 * test/regex-safety.test.ts (running each once builds the patterns made inside functions).
 * A new text-reading entry point of src/core belongs here.
 */
import { jiebaSegmenter } from '../../src/adapters/text/jieba';
import type { ConversationMessage, MemoryCandidate } from '../../src/core/types';
import { emotionScore } from '../../src/core/emotion';
import { summarizeEpisode } from '../../src/core/episodes/summarize';
import { extractAssistantContribution } from '../../src/core/extraction/assistant';
import { classifyClause } from '../../src/core/extraction/classify';
import { resolveEventDay } from '../../src/core/extraction/dates';
import { isJob } from '../../src/core/extraction/en-rules-intent';
import { extractEntities } from '../../src/core/extraction/entities';
import { isHabitual } from '../../src/core/extraction/habits';
import { extractKeywords, latinTokens } from '../../src/core/extraction/keywords';
import { cleanObject, guessForgetType, isHedged, isTaskScoped, subjectWords } from '../../src/core/extraction/match';
import { isOneOffRequest, isQuestionLike } from '../../src/core/extraction/net-statements';
import { planOfflineExtraction } from '../../src/core/extraction/offline-extractor';
import { isDirective, screenCandidates, stem, support } from '../../src/core/extraction/provenance';
import { ownSentences, ownWords } from '../../src/core/text/quoted';
import { detectResolution } from '../../src/core/extraction/resolution';
import { hasContent, segmentMessage } from '../../src/core/extraction/segments';
import { isAboutSomeoneElse } from '../../src/core/extraction/subjects';
import { detectLang, normalizeFact, prepareText, splitClauses, splitSentences, stripFiller, trimPunct } from '../../src/core/text/sentences';
import { personaLanguage } from '../../src/core/persona/profile';
import { isQuestion } from '../../src/core/proactive/digest-content';
import { goalDeadline } from '../../src/core/proactive/nudge-triggers';
import { languageOf, quoteSubject } from '../../src/core/proactive/nudge-wording';
import { isCjkQuery } from '../../src/core/recall/exchange-evidence';
import { detectFollowUp, netMayJudge } from '../../src/core/recall/follow-up';
import { neutralizeText } from '../../src/core/recall/format';
import { planRoutes } from '../../src/core/recall/query-intent';
import { isReferential, rewrittenQueries } from '../../src/core/recall/query-rewrite';
import { sanitizeQuery } from '../../src/core/recall/sanitize-query';
import { indexTokens } from '../../src/core/text/tokenize';
import { parseQueryDates, refersToSharedPast } from '../../src/core/time/query-dates';
import { parseReminderRequest } from '../../src/core/time/reminder-request';

const SAID = new Date('2026-03-10T08:00:00Z');
const user = (content: string): ConversationMessage => ({ id: 'u1', role: 'user', content, at: SAID });
const assistant = (content: string): ConversationMessage => ({ id: 'a1', role: 'assistant', content, at: SAID });
const seg = jiebaSegmenter;

/** A candidate that quotes the text, so provenance has to read it. */
function candidateOf(text: string): MemoryCandidate {
  return {
    text,
    type: 'fact',
    confidence: 0.8,
    importance: 0.5,
    keywords: [],
    entities: [],
    relations: [],
    scope: 'global',
    emotionTags: [],
    messageIds: ['u1'],
    role: 'user',
    saidAt: SAID,
    intent: 'assert',
  };
}

export const ENTRY_POINTS: Readonly<Record<string, (text: string) => unknown>> = {
  parseReminderRequest: (t) => parseReminderRequest(t, { saidAt: SAID, timeZone: 'Asia/Shanghai' }),
  parseQueryDates: (t) => parseQueryDates(t, { now: SAID, timeZone: 'Asia/Shanghai' }),
  refersToSharedPast: (t) => refersToSharedPast(t),
  sanitizeQuery: (t) => sanitizeQuery(t),
  ownWords: (t) => ownWords(t),
  ownSentences: (t) => ownSentences(t),
  planOfflineExtraction: (t) => planOfflineExtraction([user(t), assistant(t), user(t)], { timezone: 'Asia/Shanghai', segmenter: seg }),
  extractAssistantContribution: (t) => extractAssistantContribution(assistant(t), user(t), user(t), seg),
  screenCandidates: (t) => screenCandidates([candidateOf(t.slice(0, 200))], [user(t), assistant(t)], seg, 'Asia/Shanghai'),
  support: (t) => support(t.slice(0, 200), [t], seg, { forAssistant: true }),
  isDirective: (t) => isDirective(t),
  stem: (t) => stem(t),
  classifyClauseZh: (t) => classifyClause(t, 'zh', seg),
  classifyClauseEn: (t) => classifyClause(t, 'en', seg),
  segmentMessageZh: (t) => segmentMessage(t, 'zh', seg),
  segmentMessageEn: (t) => segmentMessage(t, 'en', seg),
  hasContent: (t) => [hasContent(t, 'zh', seg), hasContent(t, 'en', seg)],
  detectResolution: (t) => [detectResolution(t, 'zh', seg), detectResolution(t, 'en', seg)],
  resolveEventDay: (t) => [resolveEventDay(t, 'zh', SAID, 'Asia/Shanghai'), resolveEventDay(t, 'en', SAID, 'UTC')],
  extractEntities: (t) => [extractEntities(t, 'zh', seg), extractEntities(t, 'en', seg)],
  extractKeywords: (t) => [extractKeywords(t, 'zh', seg), extractKeywords(t, 'en', seg)],
  latinTokens: (t) => latinTokens(t),
  cleanObject: (t) => [cleanObject(t, 'zh'), cleanObject(t, 'en')],
  subjectWords: (t) => [subjectWords(t, 'en'), subjectWords(t, 'zh', seg)],
  isHedged: (t) => isHedged(t),
  isTaskScoped: (t) => isTaskScoped(t),
  guessForgetType: (t) => guessForgetType(t),
  isHabitual: (t) => [isHabitual(t, 'zh'), isHabitual(t, 'en')],
  isJob: (t) => isJob(t),
  isQuestionLike: (t) => [isQuestionLike(t, 'zh'), isQuestionLike(t, 'en')],
  isOneOffRequest: (t) => [isOneOffRequest(t, 'zh'), isOneOffRequest(t, 'en')],
  isAboutSomeoneElse: (t) => [isAboutSomeoneElse(t, 'zh'), isAboutSomeoneElse(t, 'en')],
  prepareText: (t) => prepareText(t),
  detectLang: (t) => detectLang(t),
  splitSentences: (t) => splitSentences(t),
  splitClauses: (t) => splitClauses(t, 0),
  stripFiller: (t) => [stripFiller(t, 'zh'), stripFiller(t, 'en')],
  trimPunct: (t) => trimPunct(t),
  normalizeFact: (t) => normalizeFact(t),
  emotionScore: (t) => emotionScore(t),
  summarizeEpisode: (t) => summarizeEpisode([user(t), assistant(t)], seg),
  personaLanguage: (t) => personaLanguage([t]),
  isQuestion: (t) => isQuestion(t),
  goalDeadline: (t) => goalDeadline(t, SAID, 'Asia/Shanghai'),
  languageOf: (t) => languageOf(t),
  quoteSubject: (t) => quoteSubject(t),
  isCjkQuery: (t) => isCjkQuery(t),
  detectFollowUp: (t) => detectFollowUp(t, seg),
  netMayJudge: (t) => netMayJudge(t),
  neutralizeText: (t) => neutralizeText(t),
  planRoutes: (t) => planRoutes(t),
  isReferential: (t) => isReferential(t, [t]),
  rewrittenQueries: (t) => rewrittenQueries(t, [t]),
  indexTokens: (t) => indexTokens(t, seg),
};
