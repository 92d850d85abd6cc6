import { SCENE_HEADERS } from '../core/persona/scenes';
import type { FormatContextInput } from '../core/recall/format';
import type { ServiceDeps } from '../shared/deps';
import { settleRoutes, startRoute, type RouteFailure, type RouteReport } from './route-runner';

/** The navigation block as stored: its lines, in the user's language. */
export interface RecalledScenes {
  language: 'zh' | 'en';
  lines: string[];
}

/**
 * Reads the user's scene navigation block (L2) beside the recall routes: one keyed row, reported
 * as route `scenes`; a failure is reported like any route's and the context is built without it.
 */
export async function startScenes(
  deps: Pick<ServiceDeps, 'scenes'>,
  userId: string,
  deadline: number,
  /** The read when it is shared with another statement (recall's short lists); default: the store's own. */
  read?: () => Promise<RecalledScenes | undefined>,
): Promise<{ scenes?: RecalledScenes; report: RouteReport<'scenes'>[]; failures: RouteFailure[] }> {
  const store = deps.scenes;
  if (!store) return { report: [], failures: [] };
  const since = Date.now();
  const run = read ?? (() => store.get({ userId }));
  const settled = await settleRoutes(
    [startRoute({ route: 'scenes' as const, run: async () => { const s = await run(); return s && s.lines.length > 0 ? { language: s.language, lines: s.lines } : undefined; } }, deadline)],
    { since, hits: (s) => s?.lines.length ?? 0 },
  );
  return { scenes: settled.results[0]?.value, report: settled.report, failures: settled.failures };
}

/** What formatContext needs of the scenes: the heading, the lines, and the block's share of the budget. */
export function scenesForRecall(scenes: RecalledScenes | undefined, share: number): Pick<FormatContextInput, 'scenes' | 'scenesShare'> {
  if (!scenes) return {};
  return { scenes: { header: SCENE_HEADERS[scenes.language], lines: scenes.lines }, scenesShare: share };
}
