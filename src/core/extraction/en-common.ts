/**
 * Regex building blocks for English clause rules: optional leading adverbials, a first-person
 * subject ("I", "we", "I'm"), then adverbs. All patterns are case-insensitive.
 */

/** Leading adverbials and hedges allowed before the subject. */
export const PRE =
  "(?:(?:i think|i guess|i suppose|i believe|maybe|perhaps|probably|honestly|actually|basically|currently|right now|these days|nowadays|at work|at home|personally|also|and|but|so|generally|usually|still|now|in general|for work|for context|as you know|fyi)[,\\s]+)*";
/** Adverbs between subject and verb ("I really love", "I usually use"). */
export const ADV =
  "(?:(?:really|absolutely|totally|also|just|do|still|now|actually|definitely|generally|usually|always|typically|normally|mostly|kind of|kinda|sort of|pretty much|honestly|currently|personally|truly|seriously|genuinely|even|already|mainly|primarily|recently|finally|officially|certainly)\\s+)*";
/** "I …" / "we …" */
export const SELF = `^${PRE}(?:i|we)(?:'ve|'d|'ll)?\\s+${ADV}`;
/** "I'm …" / "we're …" */
export const SELF_BE = `^${PRE}(?:i'm|i am|im|we're|we are|(?:i|we) (?:might|may|could|must) be|(?:i've|i have|we've|we have) been)\\s+${ADV}`;

/** Whitespace that `.` matches: a gap between words that stays on one line. */
export const LINE_GAP = '[^\\S\\n\\r\\u2028\\u2029]';

/**
 * The fewest words a rule captures before the marker that ends them ("… again", "… anymore"):
 * what `.+?\s+again` captures, less a capture of spaces alone. Spelled as words and the gaps
 * between them because `.+?\s+` re-reads a run of spaces once for every position in it
 * (quadratic in the run), while here each space is read a bounded number of times. `word` is the
 * class of a word's characters (`[^\s,;]` keeps the capture inside one clause), `gap` that of
 * the spaces between words. Put it after `\s+`, never after a pattern that can end in spaces.
 */
export function fewestWords(word = '\\S', gap = LINE_GAP): string {
  return `${word}+(?:${gap}+${word}+)*?`;
}

/** "my …" / "our …" */
export const MY = `^${PRE}(?:my|our)\\s+`;

/** Markers that make an instruction permanent. */
export const STANDING_EN = '(?:next time|from now on|going forward|in (?:the )?future|moving forward|henceforth|for all future (?:answers|replies|chats)|every time|from here on(?: out)?)';

/** Words that show an instruction is about the assistant's behaviour. */
export const ASSISTANT_TARGET =
  /\b(?:answers?|repl(?:y|ies)|respond|responses?|suggest(?:ions?|ing|ed)?|recommend(?:ations?|ing|ed)?|use|using|write|explain|call me|emojis?|short|brief|concise|english|chinese|mandarin|code|examples?|bullets?|formal|casual|tone|jargon|me|us|mention|include|ask|give|send|remind|show|add|talk|speak|sugarcoat|apologi[sz]e|lecture|summar\w*|markdown|tables?|links?|sources?|language|words?)\b/iu;

/** Compiles an English rule pattern (Unicode, case-insensitive). */
export function en(source: string): RegExp {
  return new RegExp(source, 'iu');
}
