/**
 * A tiny rule runner: an ordered list of (id, pattern, build) triples, the first rule whose
 * pattern matches and whose build accepts the match wins. Order encodes precedence (a forget
 * request beats an update, an update beats a plain fact…).
 */
import type { Segmenter } from '../text/segmenter';
import type { ClauseMatch } from './match';

/** Turns a pattern match into a verdict, or null to let later rules try (`segmenter` finds Chinese words). */
export type Build = (m: RegExpExecArray, clause: string, segmenter: Segmenter) => ClauseMatch | null;

/** One pattern rule; `id` names it in verdicts. */
export interface Rule {
  id: string;
  pattern: RegExp;
  build: Build;
}

/** Shorthand constructor for {@link Rule}. */
export function rule(id: string, pattern: RegExp, build: Build): Rule {
  return { id, pattern, build };
}

/** Runs rules in order and returns the first verdict. */
export function runRules(rules: readonly Rule[], clause: string, segmenter: Segmenter): ClauseMatch | null {
  for (const r of rules) {
    const m = r.pattern.exec(clause);
    if (!m) continue;
    const verdict = r.build(m, clause, segmenter);
    if (verdict) return verdict;
  }
  return null;
}

/** The named group `name` of a match, or ''. */
export function group(m: RegExpExecArray, name = 'obj'): string {
  return m.groups?.[name] ?? '';
}
