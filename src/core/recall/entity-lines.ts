/**
 * The graph over exchanges (seed 003 applied to conversation lines), the pure half: from the
 * lines that name the query's entities (the seeds) one hop to the entities said beside them, and
 * the set of lines both reach, which conversation search lets vouch for the answering routes'
 * lines inside it (one more RRF ranking, as an episode does for its sessions). Entities named in
 * more than `hubLines` lines (a partner's name, "work") are not walked through: they would reach
 * most of the user's lines.
 */
import type { EntityLines } from '../ports/recall';
import { messageKey } from '../exchange-lines';

/**
 * The entities to hop to: named beside a seed in the seeds' lines, not seeds themselves, most
 * co-mentions first (ties by key, for a stable order), at most `fanOut`. Lines of a hub seed are
 * only its latest few, so they lead nowhere.
 */
export function hopKeys(seeds: readonly EntityLines[], opts: { hubLines: number; fanOut: number }): string[] {
  const seedKeys = new Set(seeds.map((s) => s.key));
  const counts = new Map<string, number>();
  const seen = new Set<string>();
  for (const s of seeds) {
    if (s.lines > opts.hubLines) continue;
    for (const l of s.found) {
      const id = messageKey(l.conversationId, l.messageId);
      if (seen.has(id)) continue;
      seen.add(id);
      for (const k of l.keys) if (!seedKeys.has(k)) counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, opts.fanOut)
    .map(([k]) => k);
}

/**
 * The lines the graph reaches (message keys): every line read for a seed, and the lines of each
 * hop entity that is no hub. Empty without seeds: a hop needs somewhere to start.
 */
export function graphLines(seeds: readonly EntityLines[], hop: readonly EntityLines[], opts: { hubLines: number }): Set<string> {
  const out = new Set<string>();
  if (seeds.length === 0) return out;
  for (const e of [...seeds, ...hop.filter((h) => h.lines <= opts.hubLines)]) for (const l of e.found) out.add(messageKey(l.conversationId, l.messageId));
  return out;
}
