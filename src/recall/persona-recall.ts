import type { RecallPersona } from '../core/persona/ports';
import { PERSONA_HEADERS } from '../core/persona/profile';
import type { FormatContextInput } from '../core/recall/format';
import type { ServiceDeps } from '../shared/deps';
import { settleRoutes, startRoute, type RouteFailure, type RouteReport } from './route-runner';

/** The persona as recall read it. */
export type RecalledPersona = RecallPersona;

/**
 * Reads the user's persona beside the recall routes (one keyed row): its route line, and a failure
 * reported like any route's (the context is built without it, never silently).
 */
export async function startPersona(
  deps: Pick<ServiceDeps, 'personas'>,
  userId: string,
  now: Date,
  deadline: number,
  /** The read when it is shared with another statement (recall's short lists); default: the store's own. */
  read?: () => Promise<RecalledPersona | undefined>,
): Promise<{ persona?: RecalledPersona; report: RouteReport<'persona'>[]; failures: RouteFailure[] }> {
  const personas = deps.personas;
  if (!personas) return { report: [], failures: [] };
  const since = Date.now();
  const settled = await settleRoutes([startRoute({ route: 'persona' as const, run: read ?? (() => personas.forRecall({ userId, now })) }, deadline)], { since, hits: (p) => p?.lines.length ?? 0 });
  return { persona: settled.results[0]?.value, report: settled.report, failures: settled.failures };
}

/** What formatContext needs of the persona: its heading and lines, and its share of the budget. */
export function personaForRecall(persona: RecalledPersona | undefined, share: number | undefined): Pick<FormatContextInput, 'persona' | 'personaShare'> {
  if (!persona) return {};
  return { persona: { header: PERSONA_HEADERS[persona.language], lines: persona.lines }, personaShare: share };
}
