/**
 * English rules for things the user states about themself: goals, pain points, health, diet,
 * location, job, family, pets, stack and projects, learning, likes and dislikes, dated events,
 * and generic "my X is Y" facts.
 */
import { EN_SHORT_LIVED, EN_TIME } from './dates';
import { latinTokens } from './keywords';
import { EN_CONDITIONS, TECH_KINDS } from './lexicon';
import { cleanObject, HEALTH_IMPORTANCE, makeMatch, type MatchInit } from './match';
import { group, rule, type Rule } from './rule-kit';
import { en, fewestWords, LINE_GAP, MY, PRE, SELF, SELF_BE } from './en-common';
import { isJob } from './en-rules-intent';

const obj = (m: RegExpExecArray, name = 'obj'): string => cleanObject(group(m, name), 'en');
const fact = (id: string, init: Omit<MatchInit, 'type'>) => makeMatch(id, { type: 'fact', ...init });
const shortLived = (clause: string): boolean => EN_SHORT_LIVED.test(clause);
const hasTech = (s: string): boolean => latinTokens(s).some((t) => TECH_KINDS.has(t.toLowerCase())) || /[a-z]-[a-z]/u.test(s) || /\b[A-Z][\w.+#]*\b/u.test(s);

const DEADLINE = /\b(?:by|before|within|until|this year|next year|end of|in \d+ (?:days|weeks|months|years)|someday|one day|eventually)\b/iu;
const REQUEST_OBJECT = /^(?:know|ask|see|check|understand|say|tell|thank|learn more about|talk|chat|try|make sure|be clear|clarify|confirm|hear)\b/iu;
const EVENT_WORD =
  /\b(?:went|go|going|visited|visiting|visit|tried|trying|made|making|cooked|cooking|ate|eating|had|have|having|saw|seeing|watched|met|meeting|interview|appointment|flight|flying|fly|trip|travel\w*|vacation|holiday|wedding|party|concert|exam|test|surgery|checkup|deadline|presentation|started|finished|bought|ran|hiked|climbed|attended|celebrated|booked|played|baked|read|leaving|leave|arrive|arriving|returning|back from|heading|took|taking|hosted|birthday|anniversary|dinner|lunch|brunch|game|match|race|marathon|conference|class|lesson|shift|review|in town|in [A-Z]\w+)\b/iu;
/** "I moved…", "we finished…": a first-person past tense (not "I'm tired", an adjective). */
const PAST_ACTION = /^(?:[\w,' ]{0,20}\s)?(?:i|we)\s+(?:just\s+|finally\s+|also\s+)?\w+ed\b/iu;
const PAST_START = /^(?:made|cooked|grilled|baked|went|tried|had|ate|visited|saw|watched|met|spent|finished|started|bought|ran|hiked|took|finally|just)\b/iu;
const SYMPTOM = '(?:crashing|failing|timing out|breaking|freezing|hanging|dying|disconnecting|dropping|throwing|leaking|going down|restarting|erroring|getting stuck|running out|lagging)';

/** English statement rules, most specific first. */
export const EN_FACT_RULES: readonly Rule[] = [
  // Goals and pain points first: they carry the strongest signal.
  rule('en.goal.explicit', en(`${MY}(?:[\\w-]+\\s+){0,3}?(?:goals?|dreams?|aim|ambition|resolution|objective|target|mission)\\s+(?:for\\s+${fewestWords('\\w', '\\s')}\\s+|this year\\s+|for the year\\s+)?(?:is|are|was)\\s+(?:to\\s+)?(?<obj>\\S.*)`), (m) =>
    makeMatch('en.goal.explicit', { type: 'goal', confidence: 0.9, relation: 'goal', target: obj(m) }),
  ),
  rule('en.pain.the', en(`^${PRE}the\\s+(?:biggest|main|major|real|only|worst)\\s+(?:problem|issue|pain(?: point)?|headache|struggle|challenge|frustration|blocker)\\s+(?:right now\\s+|at the moment\\s+|these days\\s+|at work\\s+)?(?:is|are)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.pain.the', { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: obj(m) }),
  ),
  rule('en.pain.my', en(`${MY}(?:(?:biggest|main|major|big|only|real|current|number one|#1|greatest)\\s*)?(?:problem|issue|pain(?: point)?|headache|struggle|challenge|frustration|concern|blocker|worry)\\s+(?:right now\\s+|at the moment\\s+|these days\\s+|at work\\s+)?(?:is|are)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.pain.my', { type: 'pain_point', confidence: 0.9, relation: 'struggles_with', target: obj(m) }),
  ),
  rule('en.pain.keeps', en(`(?<![^\\n\\r\\u2028\\u2029])(?<obj>${LINE_GAP}*${fewestWords()})\\s+(?:keeps|kept|keep)\\s+(?:on\\s+)?${SYMPTOM}`), (m) =>
    /^(?:you|he|she|they)\b/iu.test(group(m)) ? null : makeMatch('en.pain.keeps', { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: obj(m) }),
  ),
  rule('en.pain.struggling', en(`^${PRE}(?:i'm|i am|we're|we are|i've been|we've been|i|we)\\s+(?:really\\s+|still\\s+|constantly\\s+)?(?:struggling|struggle|having trouble|having a hard time|having issues|having problems|stuck|have trouble|have a hard time)\\s*(?:with|to|on)?\\s*(?<obj>.*)`), (m, clause) =>
    makeMatch('en.pain.struggling', { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: obj(m), event: shortLived(clause) }),
  ),
  rule('en.pain.cant', en(`${SELF}(?:can't|cannot|can not|couldn't)\\s+(?:seem to\\s+)?(?:figure out|sleep|focus|stop|fix|solve|get rid of|concentrate)\\b\\s*(?<obj>.*)`), (m, clause) =>
    makeMatch('en.pain.cant', { type: 'pain_point', confidence: 0.8, relation: 'struggles_with', target: obj(m), event: shortLived(clause) }),
  ),
  rule('en.pain.slow', en('\\b(?:is|are|\'s|\'re|was|were|been|gets|got|getting|feels|seems)\\s+(?:so\\s+|really\\s+|too\\s+|very\\s+|super\\s+|painfully\\s+|extremely\\s+|incredibly\\s+|still\\s+|always\\s+)*(?:slow|laggy|flaky|broken|buggy|unstable|unreliable|sluggish)\\b'), (_m, clause) =>
    /^(?:you|he|she|they)\b/iu.test(clause) ? null : makeMatch('en.pain.slow', { type: 'pain_point', confidence: 0.85 }),
  ),
  rule('en.pain.always', en('\\b(?:always|constantly|often|randomly|frequently|regularly)\\s+(?:crash(?:es)?|fails?|times? out|breaks?|hangs?|freezes?|goes down|disconnects?|runs out|lags?)\\b'), () =>
    makeMatch('en.pain.always', { type: 'pain_point', confidence: 0.85 }),
  ),
  rule('en.pain.feeling', en("\\b(?:drives me (?:crazy|nuts)|driving me (?:crazy|nuts)|is killing me|bothers me|bugs me|annoys me|stresses me out|keeps me up|frustrat\\w+|insomnia)\\b"), (_m, clause) =>
    makeMatch('en.pain.feeling', { type: 'pain_point', confidence: 0.8, event: shortLived(clause) }),
  ),
  rule('en.pain.fix', en(`${SELF}(?:want|need|'d like|would like|hope)\\s+to\\s+(?:fix|solve|sort out|get rid of|deal with)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.pain.fix', { type: 'pain_point', confidence: 0.8, relation: 'struggles_with', target: obj(m) }),
  ),

  // Recurring dates and simple traits.
  rule('en.fact.date', en(`${MY}(?<what>birthday|anniversary|wedding anniversary|name day)\\s+is\\s+(?:on\\s+)?(?<obj>.+)`), (m) =>
    fact('en.fact.date', { confidence: 0.9, relation: group(m, 'what').toLowerCase(), target: obj(m) }),
  ),
  rule('en.fact.name', en("^(?:i'm|i am|my name is|my name's)\\s+(?<obj>[a-z][\\w-]*(?:\\s+[a-z][\\w-]*)?)$"), (m) =>
    /^[A-Z]/u.test(group(m)) && !isJob(group(m)) ? fact('en.fact.name', { confidence: 0.85, relation: 'name', target: group(m) }) : null,
  ),
  rule('en.fact.age', en(`${SELF_BE}(?<obj>\\d{1,3})(?:\\s+years?\\s+old|\\s*yo)?$`), (m) => fact('en.fact.age', { confidence: 0.85, relation: 'age', target: group(m) })),
  rule('en.fact.trait', en(`${SELF_BE}(?<obj>left-handed|right-handed|ambidextrous|introverted|extroverted|an introvert|an extrovert|a morning person|a night owl|self-employed|retired|unemployed|a student)\\b`), (m) =>
    fact('en.fact.trait', { confidence: 0.85, relation: 'is', target: group(m) }),
  ),

  // Health and diet.
  rule('en.health.allergic', en(`${SELF_BE}(?:severely\\s+|very\\s+|mildly\\s+|deathly\\s+|highly\\s+|a bit\\s+)?allergic\\s+to\\s+(?<obj>\\S.*)`), (m) =>
    fact('en.health.allergic', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'allergic_to', target: obj(m) }),
  ),
  rule('en.health.allergy', en(`(?:${SELF}(?:have|'ve got|got)\\s+(?:a|an)?\\s*|${MY})(?:severe\\s+|bad\\s+|mild\\s+)?(?<obj>[\\w\\s-]+?)\\s+allergy`), (m) =>
    fact('en.health.allergy', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'allergic_to', target: obj(m) }),
  ),
  rule('en.health.condition', en(`${SELF}(?:have|'ve got|got|suffer from|was diagnosed with|were diagnosed with|live with|am living with|'m living with|deal with)\\s+(?<obj>\\S.*)`), (m) => {
    const c = EN_CONDITIONS.exec(group(m));
    return c ? fact('en.health.condition', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'has_condition', target: c[0] }) : null;
  }),
  rule('en.health.state', en(`${SELF_BE}(?:a\\s+)?(?<obj>diabetic|pre-diabetic|prediabetic|lactose intolerant|gluten intolerant|celiac|coeliac|asthmatic|pregnant|epileptic|anemic|colou?r-?blind|deaf|hard of hearing)`), (m) =>
    fact('en.health.state', { confidence: 0.9, importance: HEALTH_IMPORTANCE, relation: 'has_condition', target: group(m) }),
  ),
  rule('en.health.cannot', en(`${SELF}(?:can't|cannot|can not)\\s+(?:eat|drink|have|tolerate|digest)\\s+(?<obj>\\S.*)`), (m) =>
    fact('en.health.cannot', { confidence: 0.85, importance: 0.8, relation: 'avoids', target: obj(m) }),
  ),
  rule('en.diet', en(`${SELF_BE}(?:a\\s+|an\\s+|strictly\\s+|mostly\\s+|fully\\s+)?(?<obj>vegetarian|vegan|pescatarian|pescetarian|keto|on a diet|on keto|kosher|halal|gluten-free|dairy-free|plant-based)\\b`), (m) =>
    fact('en.diet', { confidence: 0.9, importance: 0.7, relation: 'diet', target: group(m).toLowerCase() }),
  ),

  // Place, job, family, pets.
  rule('en.location.live', en(`(?:${SELF}(?:currently\\s+)?(?:live|reside|stay|am living|'m living|are living|'re living)\\s+(?:in|at|near)\\s+|${SELF_BE}(?:based|located|living)\\s+(?:in|at|near|out of)\\s+)(?<obj>\\S.*)`), (m) =>
    fact('en.location.live', { confidence: 0.9, relation: 'lives_in', target: obj(m) }),
  ),
  rule('en.location.from', en(`(?:${SELF_BE}(?:originally\\s+)?from\\s+|${SELF}grew up in\\s+|${MY}(?:home ?town|home) is (?:in )?)(?<obj>.+)`), (m) =>
    fact('en.location.from', { confidence: 0.85, relation: 'from', target: obj(m) }),
  ),
  rule('en.job.as', en(`${SELF}(?:work|am working|'m working|work full-time|work part-time)\\s+as\\s+(?:a|an)?\\s*(?<obj>.+?)(?:\\s+(?:at|for|in)\\s+(?<org>\\S.*))?$`), (m) =>
    fact('en.job.as', { confidence: 0.9, relation: 'works_as', target: obj(m) }),
  ),
  rule('en.job.at', en(`${SELF}(?:work|am working|'m working)\\s+(?:at|for)\\s+(?<obj>\\S.*)`), (m) => fact('en.job.at', { confidence: 0.85, relation: 'works_at', target: obj(m) })),
  rule('en.job.title', en(`${MY}(?:job|role|position|title|profession|occupation)\\s+is\\s+(?:a\\s+|an\\s+)?(?<obj>.+)`), (m) =>
    fact('en.job.title', { confidence: 0.9, relation: 'works_as', target: obj(m) }),
  ),
  rule('en.pref.fan', en(`${SELF_BE}(?:a\\s+)?(?:big\\s+|huge\\s+|massive\\s+)?fan\\s+of\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.pref.fan', { type: 'preference', confidence: 0.9, relation: 'likes', target: obj(m) }),
  ),
  rule('en.job.is', en(`${SELF_BE}(?:a|an)\\s+(?<obj>[\\w\\s-]+?)(?:\\s+(?:at|for|in|by|with|from)\\s+(?<org>\\S.*))?$`), (m) => {
    const what = obj(m);
    if (/^(?:bit|little|lot|big fan|fan)\b/iu.test(what)) return null;
    return isJob(what) ? fact('en.job.is', { confidence: 0.9, relation: 'works_as', target: what }) : fact('en.identity', { confidence: 0.75, relation: 'is', target: what });
  }),
  rule('en.family.count', en(`${SELF}(?:have|'ve got|got)\\s+(?:a|an|one|two|three|four|five|six|\\d+)\\s+(?<obj>(?:\\w+\\s+)?(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings|grandkids|grandchildren|twins|boys?|girls?))\\b`), (m) =>
    fact('en.family.count', { confidence: 0.9, relation: 'has_family', target: obj(m) }),
  ),
  rule('en.family.member', en(`${MY}(?<obj>wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|son|daughter|kids?|children|mom|mum|mother|dad|father|brother|sister|parents|grandma|grandpa|grandmother|grandfather|twins|baby)(?:'s|\\s+)`), (m, clause) => {
    // A relative's dated plan ("my mom's surgery is next week") is an event of the user's life.
    const type = EN_TIME.test(clause) && EVENT_WORD.test(clause.replace(EN_TIME, ' ')) ? 'event' : 'fact';
    const who = group(m).toLowerCase();
    const match = makeMatch('en.family.member', { type, confidence: 0.85, relation: 'has_family', target: who });
    // "My daughter is allergic to eggs": the allergy is the relative's.
    const allergy = /\ballergic to\s+(\S.*)/iu.exec(clause);
    if (allergy) match.relations.push({ source: who, relation: 'allergic_to', target: cleanObject(allergy[1] ?? '', 'en') });
    return match;
  }),
  rule('en.family.status', en(`${SELF_BE}(?<obj>married|engaged|divorced|single|widowed|a (?:mom|dad|mother|father|parent|single parent|grandparent))\\b`), (m) =>
    fact('en.family.status', { confidence: 0.85, relation: 'marital_status', target: group(m) }),
  ),
  rule('en.pet.have', en(`${SELF}(?:have|'ve got|got|own|adopted|just got)\\s+(?:a|an|one|two|three|\\d+)\\s+(?:[\\w-]+\\s+)?(?<obj>dogs?|cats?|puppy|puppies|kittens?|hamsters?|rabbits?|parrots?|goldfish|turtles?|corgis?|labradors?|retrievers?|bunny|bunnies)\\b(?:\\s+(?:named|called)\\s+(?<name>[A-Z][\\w-]*))?`), (m) => {
    const name = group(m, 'name');
    return fact('en.pet.have', { confidence: 0.9, relation: 'has_pet', target: name ? `${group(m).toLowerCase()} (${name})` : group(m).toLowerCase() });
  }),
  rule('en.pet.mine', en(`${MY}(?<obj>dog|cat|puppy|kitten|hamster|rabbit|parrot|corgi|bunny|dogs|cats)(?:\\s+[A-Z][\\w-]*)?\\s+(?:is|named|called|'s|loves|hates|likes|was|has|and|sleeps|eats)\\b`), (m) =>
    fact('en.pet.mine', { confidence: 0.85, relation: 'has_pet', target: group(m).toLowerCase() }),
  ),

  // Stack, projects, learning.
  rule('en.project.mine', en(`${MY}(?:main\\s+|current\\s+|day-to-day\\s+|side\\s+|big\\s+|new\\s+)?(?:project|repo|service|product|app|codebase|startup|side project)\\s+(?:right now\\s+|currently\\s+|at the moment\\s+|these days\\s+|at work\\s+)?(?:is|are)\\s+(?:called\\s+)?(?<obj>.+)`), (m) =>
    fact('en.project.mine', { confidence: 0.9, relation: 'works_on', target: obj(m).split(/,\s*/u)[0] ?? obj(m) }),
  ),
  rule('en.stack.ours', en(`${MY}(?:tech\\s+)?(?:stack|backend|frontend|infra|infrastructure|database|db|main language)\\s+(?:is|are|runs on|uses)\\s+(?<obj>\\S.*)`), (m) =>
    fact('en.stack.ours', { confidence: 0.9, relation: 'uses', target: obj(m) }),
  ),
  rule('en.stack.use', en(`${SELF}(?:use|are using|'re using|am using|'m using|code in|write|program in|work in|work with|develop in|build with|build in|run|deploy on|deploy to|rely on)\\s+(?<obj>\\S.*)`), (m, clause) =>
    hasTech(group(m)) ? fact('en.stack.use', { confidence: 0.85, relation: 'uses', target: obj(m), event: shortLived(clause) }) : null,
  ),
  rule('en.project.work', en(`(?:${SELF}(?:work on|maintain|build|develop|run)|${SELF_BE}(?:working on|building|maintaining|developing|running))\\s+(?<obj>\\S.*)`), (m, clause) =>
    // "I'm running late", "we run low on milk": no project.
    /^(?:late|behind|low|out|short|errands|around)\b/iu.test(group(m)) ? null : fact('en.project.work', { confidence: 0.85, relation: 'works_on', target: obj(m), event: shortLived(clause) }),
  ),
  rule('en.learning', en(`(?:${SELF_BE}(?:currently\\s+|still\\s+)?learning|${SELF}(?:have|'ve)\\s+been\\s+learning|${SELF}(?:started|began)\\s+learning|${SELF}(?:study|am studying|'m studying))\\s+(?<obj>\\S.*)`), (m, clause) =>
    fact('en.learning', { confidence: 0.85, relation: 'learning', target: obj(m), event: shortLived(clause) }),
  ),
  rule('en.speaks', en(`${SELF}speak\\s+(?<obj>\\S.*)`), (m) => fact('en.speaks', { confidence: 0.85, relation: 'speaks', target: obj(m) })),

  // Likes and dislikes.
  rule('en.pref.favourite', en(`${MY}(?:all-time\\s+|absolute\\s+)?favou?rite\\s+(?<what>${fewestWords('\\w', '\\s')})\\s+(?:is|are)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.pref.favourite', { type: 'preference', confidence: 0.9, relation: 'likes', target: obj(m) }),
  ),
  rule('en.pref.dislike', en(`${SELF}(?:hate|dislike|can't stand|cannot stand|can not stand|detest|loathe|despise|don't like|do not like|don't enjoy|do not enjoy|don't really like|can't handle|cannot handle|don't care for|am not a fan of|'m not a fan of|am not into|'m not into|am not big on|'m not big on)\\s+(?<obj>\\S.*)|${SELF_BE}not\\s+(?:a\\s+)?(?:fan of|into|big on)\\s+(?<obj2>\\S.*)`), (m) =>
    makeMatch('en.pref.dislike', { type: 'preference', confidence: 0.9, relation: 'dislikes', target: obj(m) || obj(m, 'obj2') }),
  ),
  rule('en.pref.avoid', en(`${SELF}(?:never|don't|do not|avoid|try not to|rarely)\\s+(?:eat|drink|touch|consume|have)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.pref.avoid', { type: 'preference', confidence: 0.9, relation: 'avoids', target: obj(m) }),
  ),
  rule('en.pref.like', en(`(?:${SELF}(?:love|like|enjoy|adore|prefer|dig)|${SELF_BE}(?:into|fond of|crazy about|obsessed with|passionate about|a sucker for))\\s+(?<obj>\\S.*)`), (m, clause) => {
    const target = obj(m);
    if (/^(?:to know|it when you|you\b|that you)/iu.test(target)) return null;
    const prefers = /\bprefer\b/iu.test(clause);
    return makeMatch('en.pref.like', { type: 'preference', confidence: 0.9, relation: prefers ? 'prefers' : 'likes', target, event: shortLived(clause) });
  }),
  rule('en.pref.rather', en(`${SELF}(?:'d|would)\\s+rather\\s+(?<obj>\\S.*)`), (m) => makeMatch('en.pref.rather', { type: 'preference', confidence: 0.75, relation: 'prefers', target: obj(m) })),

  // Plans, wishes and dated events.
  rule('en.goal.plan', en(`(?:${SELF_BE}(?:planning|hoping|aiming|trying|determined|committed|working hard|saving up|going)|${SELF}(?:plan|hope|aim|intend|want|'d like|would like|need|'ll try|will try))\\s+(?:to|for)\\s+(?<obj>\\S.*)`), (m, clause) => {
    const target = obj(m);
    if (!target || REQUEST_OBJECT.test(target)) return null;
    if (EN_TIME.test(clause) && !DEADLINE.test(clause)) return makeMatch('en.goal.plan', { type: 'event', confidence: 0.85 });
    const strong = DEADLINE.test(clause) || /\b(?:plan|planning|aim|aiming|intend|determined|committed|working hard|saving up)\b/iu.test(clause);
    if (!strong && /\bgoing\b/iu.test(clause)) return null;
    return makeMatch('en.goal.plan', { type: 'goal', confidence: strong ? 0.85 : 0.65, importance: strong ? undefined : 0.5, relation: 'goal', target, event: shortLived(clause) });
  }),
  rule('en.event.dated', EN_TIME, (_m, clause) => {
    const firstPerson = /^(?:[\w,' ]{0,30}\s)?(?:i|i'm|i've|i'll|i'd|we|we're|we've|we'll|my|our|me)\b/iu.test(clause);
    if (!firstPerson && !PAST_START.test(clause)) return null;
    if (/^(?:you|he|she|they|it)\b/iu.test(clause)) return null;
    const rest = clause.replace(EN_TIME, ' ');
    return EVENT_WORD.test(rest) || PAST_ACTION.test(rest) || PAST_START.test(rest) ? makeMatch('en.event.dated', { type: 'event', confidence: 0.85 }) : null;
  }),

  // Generic facts, least specific last.
  rule('en.fact.my', en(`${MY}(?<what>[\\w' -]{1,30}?)\\s+(?:is|are|was|were|has|have)\\s+(?<obj>\\S.*)`), (m) => {
    const what = group(m, 'what').toLowerCase();
    return /^(?:question|point|guess|bad|apologies)$/u.test(what) ? null : fact('en.fact.my', { confidence: 0.8, relation: what, target: obj(m) });
  }),
  rule('en.fact.have', en(`${SELF}(?:have|'ve got|own)\\s+(?:a|an|two|three|\\d+)\\s+(?<obj>\\S.*)`), (m) =>
    /^(?:question|quick question|idea|problem|issue|meeting|call|minute|second|moment|sec|look|try|go)\b/iu.test(group(m)) ? null : fact('en.fact.have', { confidence: 0.75, relation: 'has', target: obj(m) }),
  ),
  // Habits are standing preferences: "I usually…", "For APIs I always…", "When I cook, I tend to…".
  rule('en.fact.habit', en(`^${PRE}(?:(?:for|with|when|whenever|on|at|if|in)\\b[^,]{1,40}?,?\\s+)?(?:i|we)\\s+(?:(?:almost|nearly|pretty much)\\s+)?(?:usually|always|often|never|typically|normally|regularly|sometimes|generally|mostly|habitually|tend to)\\s+(?<obj>\\S.*)`), (m) =>
    makeMatch('en.fact.habit', { type: 'preference', confidence: 0.8, relation: 'habit', target: obj(m) }),
  ),
  rule('en.fact.habit.lead', en('^(?:(?:so|and|but|also)\\s+)?(?:usually|normally|typically|generally|as a rule|by default|most of the time|most (?:days|mornings|evenings|nights|weekends)|on (?:weekdays|weekends)|every (?:day|morning|evening|night|weekend))[,\\s]+(?:i|we)\\s+(?<obj>\\S.*)'), (m) =>
    makeMatch('en.fact.habit', { type: 'preference', confidence: 0.8, relation: 'habit', target: obj(m) }),
  ),
  rule('en.fact.activity', en(`${SELF}(?<obj>smoke|drink|run|swim|cook|meditate|jog|cycle|bike|drive|commute|vape|work out|do yoga|play \\w+)\\b`), (m) =>
    fact('en.fact.activity', { confidence: 0.8, relation: 'does', target: group(m) }),
  ),
];
