/**
 * English rules that act on memory or on the assistant: forget requests, standing and
 * task-scoped instructions, updates/negations of earlier facts, and decisions.
 */
import { EN_JOBS } from './lexicon';
import { isAboutSomeoneElse } from './subjects';
import { cleanObject, guessForgetType, HEALTH_IMPORTANCE, isTaskScoped, makeMatch, subjectWords } from './match';
import { group, rule, type Rule } from './rule-kit';
import { ASSISTANT_TARGET, en, fewestWords, LINE_GAP, MY, PRE, SELF, SELF_BE, STANDING_EN } from './en-common';

const obj = (m: RegExpExecArray, name = 'obj'): string => cleanObject(group(m, name), 'en');

function forgetSubject(raw: string): string {
  const cleaned = cleanObject(raw.replace(/^(?:about|that|the fact that)\s+/iu, ''), 'en');
  if (/^where (?:i|we) live\b/iu.test(cleaned)) return 'address';
  return subjectWords(cleaned, 'en') || cleaned.toLowerCase();
}

function forget(id: string, m: RegExpExecArray) {
  const subject = forgetSubject(group(m));
  if (!subject) return null;
  return makeMatch(id, { type: guessForgetType(subject), intent: 'forget', confidence: 0.95, importance: 0.8, subject });
}

/** A job-like noun phrase: its last word is an occupation or looks like one. */
export function isJob(phrase: string): boolean {
  const last = phrase.toLowerCase().trim().split(/\s+/u).pop() ?? '';
  if (/^(?:fan|bit|lot|little|person|user|member|beginner|believer|mess|wreck|number|couple|fraction)$/u.test(last)) return false;
  return EN_JOBS.has(last) || EN_JOBS.has(last.replace(/s$/u, '')) || /(?:er|or|ist|ian|eer|ant)$/u.test(last);
}

const FORGET_VERB = "(?:forget|delete|erase|remove|wipe|clear|drop|stop remembering|don't remember|do not remember|don't store|do not store|don't keep|do not keep|unlearn|purge)";

/**
 * "If I paste a stack trace, just tell me the fix first", "when I ask you for recipes pls use
 * grams": a condition on the user's own doing, then an imperative to the assistant, is a standing
 * instruction for every such time. Read over the whole sentence (the condition is its lead-in).
 */
const EN_CONDITIONAL_INSTRUCTION = en(
  "^(?:if|when|whenever|every time|each time|any ?time|anytime)\\s+(?:i|i'm|i've)\\s[^,.!?]{1,80}?(?:,\\s*|\\s+(?=please\\s|pls\\s|plz\\s))(?:(?:please|pls|plz|just|always|then|also|first)\\s+){0,3}(?:tell|give|keep|make|use|convert|check|lead|answer|reply|respond|write|show|start|open|put|skip|stick|include|add|list|explain|summari[sz]e|translate|mark|label|flag|cut|shorten|don't|do not|never|avoid)\\b",
);

/** English rules checked before any statement rule: forget, instruction, decision, update. */
export const EN_INTENT_RULES: readonly Rule[] = [
  rule('en.forget.verb', en(`^(?:(?:can|could|would|will) you\\s+)?(?:please\\s+)?${FORGET_VERB}\\s+(?:about\\s+)?(?<obj>.+)$`), (m) => forget('en.forget.verb', m)),
  rule('en.forget.want', en(`^${PRE}i\\s+(?:want|need|would like|'d like)\\s+you\\s+to\\s+${FORGET_VERB}\\s+(?:about\\s+)?(?<obj>.+)$`), (m) => forget('en.forget.want', m)),

  rule('en.instr.standing', en(`^(?:please\\s+)?${STANDING_EN}[,\\s]*(?:please\\s+)?(?<obj>.+)$`), (m) =>
    ASSISTANT_TARGET.test(group(m)) ? makeMatch('en.instr.standing', { type: 'instruction', confidence: 0.9, standing: true }) : null,
  ),
  rule('en.instr.conditional', EN_CONDITIONAL_INSTRUCTION, () => makeMatch('en.instr.conditional', { type: 'instruction', confidence: 0.85, standing: true })),
  rule('en.instr.always', en(`^(?:and\\s+|so\\s+|also\\s+)?(?:please\\s+)?(?:always|never|don't ever|do not ever|don't|do not|stop|avoid|only|no more|make sure (?:to|you)|remember to|be sure to)\\s+(?<obj>\\S.*)$`), (m) =>
    ASSISTANT_TARGET.test(group(m)) ? makeMatch('en.instr.always', { type: 'instruction', confidence: 0.9, standing: true }) : null,
  ),
  rule('en.instr.keep', en('^(?:and\\s+)?(?:please\\s+)?(?:keep|make)\\s+(?:it|them|things|your (?:answers|replies|responses)|answers|replies|responses)\\s+(?:short|brief|concise|simple|detailed|casual|formal|professional|friendly|to the point|clear|tight)'), () =>
    makeMatch('en.instr.keep', { type: 'instruction', confidence: 0.9, standing: true }),
  ),
  rule('en.instr.language', en('^(?:please\\s+)?(?:answer|reply|respond|talk|speak|write)(?:\\s+to\\s+me|\\s+me)?\\s+(?:only\\s+)?(?:in|using)\\s+(?<obj>[a-z]+)'), (m) =>
    makeMatch('en.instr.language', { type: 'instruction', confidence: 0.9, standing: true, relation: 'answer_language', target: group(m) }),
  ),
  rule('en.instr.callme', en('^(?:please\\s+)?(?:call me|address me as)\\s+(?<obj>\\S.*)$'), (m) =>
    makeMatch('en.instr.callme', { type: 'instruction', confidence: 0.9, standing: true, relation: 'called', target: obj(m) }),
  ),
  rule('en.instr.be', en('^(?:please\\s+)?be\\s+(?:more\\s+|less\\s+)?(?:concise|brief|direct|formal|casual|detailed|blunt|honest|succinct)'), () =>
    makeMatch('en.instr.be', { type: 'instruction', confidence: 0.85, standing: true }),
  ),
  rule('en.instr.prefer', en(`^${PRE}i\\s+(?:really\\s+)?(?:want|prefer|'d prefer|would prefer|'d like|would like|like)\\s+(?:you to\\s+(?:give|write|keep)\\s+)?(?:(?:short|shorter|brief|concise|detailed|longer|simple)\\s+)(?:answers|replies|responses|explanations)`), () =>
    makeMatch('en.instr.prefer', { type: 'instruction', confidence: 0.85, standing: true }),
  ),
  rule('en.instr.task', en('\\b(?:use|using|write (?:it|this) in|written in|go with|stick with|stick to|do it in|implement it in|code it in)\\s+(?<obj>[\\w.+#-]+)'), (m, clause) =>
    isTaskScoped(clause) ? makeMatch('en.instr.task', { type: 'instruction', confidence: 0.85, relation: 'task_uses', target: group(m) }) : null,
  ),

  rule('en.decision', en(`^${PRE}(?:we|i|the team|our team|they)(?:'ve| have)?\\s+(?:finally\\s+|just\\s+|eventually\\s+|officially\\s+)?(?:decided|agreed|chose|settled on|committed to|opted for|picked|went with|are going with|'re going with|will go with|'ll go with|are going to go with)\\s+(?:to\\s+)?(?:go with\\s+|use\\s+|on\\s+)?(?<obj>.+)`), (m) =>
    makeMatch('en.decision', { type: 'decision', confidence: 0.85, relation: 'decided', target: obj(m) }),
  ),
  rule('en.decision.lets', en("^(?:ok(?:ay)?[,\\s]+)?let's go with\\s+(?<obj>\\S.*)|^the decision is\\s+(?:to\\s+)?(?<obj2>.+)"), (m) =>
    makeMatch('en.decision.lets', { type: 'decision', confidence: 0.8, relation: 'decided', target: obj(m) || obj(m, 'obj2') }),
  ),

  rule('en.update.switch', en(`^${PRE}(?:i|we)(?:'ve| have)?\\s+(?:just\\s+|recently\\s+|finally\\s+)?(?:switched|migrated|moved|changed|went)\\s+from\\s+(?<from>${fewestWords()})\\s+to\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.update.switch', { type: 'fact', intent: 'update', confidence: 0.85, relation: 'uses', target: obj(m), subject: subjectWords(group(m, 'from'), 'en') }),
  ),
  rule('en.update.usedto', en(`${SELF}used to\\s+(?<from>${fewestWords('[^\\s,]', `(?:${LINE_GAP}|,)`)}),?\\s+but\\s+(?:now\\s+)?(?:i|we)(?:'m| am)?\\s+(?<obj>\\S.*)`), (m) => {
    const place = /^(?:live|am living|'m living)\s+in\s+(\S.*)$/iu.exec(group(m));
    return makeMatch('en.update.usedto', {
      type: 'fact',
      intent: 'update',
      confidence: 0.85,
      relation: place ? 'lives_in' : undefined,
      target: place ? cleanObject(place[1] ?? '', 'en') : undefined,
      subject: subjectWords(group(m, 'from'), 'en'),
    });
  }),
  rule('en.update.move', en(`^${PRE}(?:i|we)(?:'ve| have)?\\s+(?:just\\s+|recently\\s+|finally\\s+|actually\\s+)?(?:moved|relocated|moved back)\\s+(?:to|into|back to)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.update.move', { type: 'fact', intent: 'update', confidence: 0.9, relation: 'lives_in', target: obj(m).replace(/(?<!\s)\s+(?:last|this|a)\s+\w+(?:\s+ago)?$/iu, ''), subject: 'live' }),
  ),
  rule('en.update.jobchange', en(`${SELF}(?:'ve |have )?(?:changed|switched|changed|started|got|quit|left)\\s+(?:a\\s+new\\s+|my\\s+)?(?:jobs?|careers?|roles?|positions?|companies)`), () =>
    makeMatch('en.update.jobchange', { type: 'fact', intent: 'update', confidence: 0.9, subject: 'job' }),
  ),
  rule('en.update.nowjob', en(`(?:${SELF_BE}now\\s+(?:a|an)\\s+|${SELF}now\\s+work\\s+as\\s+(?:a|an)?\\s*|^(?:and\\s+)?now,?\\s+(?:i'm|i am)\\s+(?:a|an)\\s+|^(?:and\\s+)?now,?\\s+i\\s+work\\s+as\\s+(?:a|an)?\\s*)(?<obj>[\\w\\s-]+)`), (m) =>
    isJob(obj(m)) ? makeMatch('en.update.nowjob', { type: 'fact', intent: 'update', confidence: 0.9, relation: 'works_as', target: obj(m), subject: 'job' }) : null,
  ),
  rule('en.update.stopped', en(`${SELF}(?:have\\s+|'ve\\s+)?(?:stopped|quit|gave up|given up|no longer)\\s+(?<obj>\\S.*)`), (m) => {
    const subject = subjectWords(group(m), 'en');
    return subject ? makeMatch('en.update.stopped', { type: 'fact', intent: 'update', confidence: 0.9, subject }) : null;
  }),
  rule('en.update.anymore', en(`^${PRE}(?:i|we|my \\w+)(?:'m| am|'re| are| is)?\\s+(?:don't|do not|doesn't|can't|am not|'m not|not|no longer|aren't|isn't|never)\\s+(?<obj>${fewestWords()})\\s+(?:anymore|any more|any longer)\\b`), (m, clause) => {
    // "My son doesn't get nosebleeds anymore" is the son's change, not the user's.
    if (isAboutSomeoneElse(clause, 'en')) return null;
    const subject = subjectWords(group(m), 'en');
    const health = /allerg|diabet|asthma|sick|ill/iu.test(clause);
    return subject ? makeMatch('en.update.anymore', { type: 'fact', intent: 'update', confidence: 0.9, subject, importance: health ? HEALTH_IMPORTANCE : undefined }) : null;
  }),
  rule('en.update.notanymore', en(`${SELF_BE}not\\s+(?<obj>${fewestWords()})\\s+(?:anymore|any more|any longer)`), (m) => {
    const subject = subjectWords(group(m), 'en');
    return subject ? makeMatch('en.update.notanymore', { type: 'fact', intent: 'update', confidence: 0.9, subject }) : null;
  }),
  rule('en.update.again', en(`${SELF}(?:can\\s+)?(?<obj>(?:eat|drink|use|smoke|live|work|am|like|love|enjoy|play|run|have)\\b\\S*(?:${LINE_GAP}+\\S+)*?)\\s+again\\b`), (m) => {
    const target = obj(m).replace(/^(?:eat|drink|use|have)\s+/iu, '');
    const subject = subjectWords(target, 'en');
    return subject ? makeMatch('en.update.again', { type: 'fact', intent: 'update', confidence: 0.9, relation: /^(?:eat|drink)/iu.test(group(m)) ? 'eats' : 'does', target, subject }) : null;
  }),
  rule('en.update.now', en(`(?:${SELF}(?:can\\s+)?now\\s+|${SELF_BE}now\\s+|^${PRE}(?:these days|nowadays)[,\\s]+(?:i|we)\\s+)(?<obj>\\S.*)`), (m) => {
    const subject = subjectWords(group(m), 'en');
    return subject ? makeMatch('en.update.now', { type: 'fact', intent: 'update', confidence: 0.85, subject }) : null;
  }),
  rule('en.update.cannow', en(`${SELF}can\\s+(?<obj>(?:eat|drink|have|use)\\s+${fewestWords()})\\s+(?:now|again)\\b`), (m) => {
    const target = obj(m).replace(/^(?:eat|drink|have|use)\s+/iu, '');
    return makeMatch('en.update.cannow', { type: 'fact', intent: 'update', confidence: 0.9, relation: 'eats', target, subject: subjectWords(target, 'en') });
  }),
  rule('en.update.recovered', en(`${SELF}(?:have\\s+|'ve\\s+)?(?:recovered from|got over|gotten over|was cured of|beat|outgrew|grew out of)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.update.recovered', { type: 'fact', intent: 'update', confidence: 0.85, importance: HEALTH_IMPORTANCE, subject: subjectWords(group(m), 'en') }),
  ),
  rule('en.update.denial', en(`^(?:actually|correction|to be clear)[,\\s]+(?:i'm|i am)\\s+not\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.update.denial', { type: 'fact', intent: 'update', confidence: 0.85, subject: subjectWords(group(m), 'en') }),
  ),
  rule('en.update.nolonger.my', en(`${MY}(?<obj>${fewestWords()})\\s+(?:is|are)\\s+no longer\\b`), (m) =>
    makeMatch('en.update.nolonger.my', { type: 'fact', intent: 'update', confidence: 0.85, subject: subjectWords(group(m), 'en') }),
  ),
];
