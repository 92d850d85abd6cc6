/**
 * Fusion: the routes' rankings fused with RRF, the fused memories and the standing instructions
 * loaded (hydrated), and the hydrated memories ranked for the context.
 */
import { rankMemories, type RankCandidate, type RankedMemory } from '../core/recall/rank';
import { fuseRankings, type FusedCandidate, type RouteRanking } from '../core/recall/rrf';
import type { DateRange } from '../core/time/query-dates';
import type { Memory } from '../core/types';
import { withDeadline } from './deadline';
import { inRangeFirst } from './episodic-recall';
import { TYPE_K, type RecallDeps, type RecallRequest } from './recall-request';
import type { RouteFailure } from './route-runner';

/** Hydration may take this long past the routes' deadline. */
const HYDRATE_GRACE_MS = 1000;

/** The user's global standing instructions, loaded beside the routes; awaited by the fusion stage. */
export function startInstructions(deps: Pick<RecallDeps, 'memories'>, req: RecallRequest): Promise<Memory[]> {
  const loading = req.lists ? req.lists.then((l) => l.instructions) : deps.memories.byTypes({ userId: req.userId, types: ['instruction'], k: TYPE_K, scope: 'global', now: req.now });
  // Observed now; the fusion stage reports a failure as the hydrate step's.
  loading.catch(() => {});
  return loading;
}


/** What fusion found: the fused candidates, the memories still active among them, the instructions. */
export interface Fused {
  fused: FusedCandidate[];
  fusedById: Map<string, FusedCandidate>;
  hydrated: Memory[];
  instructions: Memory[];
}

/**
 * Fuses the routes' rankings with RRF and loads the fused memories that are still active and
 * unexpired (with the instructions); a failed load is reported as `hydrate` and leaves both empty.
 */
export async function fuseAndHydrate(deps: Pick<RecallDeps, 'memories'>, req: RecallRequest, rankings: RouteRanking[], instructions: Promise<Memory[]>, failures: RouteFailure[]): Promise<Fused> {
  const fused = fuseRankings(rankings);
  const fusedById = new Map<string, FusedCandidate>();
  for (const f of fused) fusedById.set(f.id, f);
  const out: Fused = { fused, fusedById, hydrated: [], instructions: [] };
  try {
    [out.instructions, out.hydrated] = await withDeadline(
      // What the routes brought with them is not loaded again (hydration.ts).
      Promise.all([instructions, req.hydration ? req.hydration.complete(fused.map((f) => f.id)) : deps.memories.getActive({ userId: req.userId, ids: fused.map((f) => f.id), now: req.now })]),
      req.deadline + HYDRATE_GRACE_MS,
    );
  } catch (err) {
    failures.push({ route: 'hydrate', err });
  }
  // A memory waiting for the user's confirmation (an instruction an agent wrote) is not recalled:
  // not as a standing instruction, not as reference data, not as a search result.
  out.instructions = out.instructions.filter((m) => !m.pending);
  out.hydrated = out.hydrated.filter((m) => !m.pending);
  return out;
}

/**
 * Ranks the hydrated memories by fused relevance, decay, importance and type, best `maxResults`;
 * with a date in the query, memories said on that date come first, then the rest by score.
 */
export function rankFused(input: { fused: readonly FusedCandidate[]; hydrated: readonly Memory[]; now: Date; maxResults: number; ranges: readonly DateRange[] }): RankedMemory<Memory>[] {
  const byId = new Map<string, Memory>();
  for (const m of input.hydrated) byId.set(m.id, m);
  const candidates: RankCandidate<Memory>[] = [];
  for (const f of input.fused) {
    const memory = byId.get(f.id);
    if (memory) candidates.push({ memory, relevance: f.score });
  }
  const ranked = rankMemories(candidates, { now: input.now, maxResults: input.ranges.length > 0 ? Number.MAX_SAFE_INTEGER : input.maxResults });
  return inRangeFirst(ranked, input.ranges, (r) => r.memory.createdAt).slice(0, input.maxResults);
}
