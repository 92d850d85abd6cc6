/**
 * The budget cut and the response: what was found formatted for the prompt within the token
 * budget, and only what made it into the context listed.
 */
import type { RankedExchange } from '../core/recall/exchanges';
import { formatContext } from '../core/recall/format';
import { isoInstant } from '../core/time/zones';
import type { rankForInjection } from '../core/recall/inject';
import type { RankedMemory } from '../core/recall/rank';
import type { FusedCandidate } from '../core/recall/rrf';
import type { DateRange } from '../core/time/query-dates';
import type { Memory } from '../core/types';
import { recalledExchanges, toPastExchanges } from './episodic-recall';
import type { FollowUpOutcome } from './follow-up-route';
import { personaForRecall, type RecalledPersona } from './persona-recall';
import type { RecalledMemory, RecallResult } from './recall-request';
import { foldRouteFailures, type RouteFailure } from './route-runner';
import { scenesForRecall, type RecalledScenes } from './scenes-recall';

/**
 * Formats what was found for the prompt within the token budget (the persona within its share,
 * then instructions, then the memories and past exchanges in the joint order of `injection`, or
 * memories before exchanges without it; a memory the persona states is not repeated) and builds the response: only what made it into the context is listed, and route
 * failures fold into `error`.
 */
export function buildRecallResult(input: {
  ranked: readonly RankedMemory<Memory>[];
  instructions: readonly Memory[];
  exchanges: readonly RankedExchange[];
  injection?: ReturnType<typeof rankForInjection>['items'];
  /** Memories left out in favour of the exchange that is their source: listed when that exchange is injected. */
  carriedBy?: ReadonlyMap<string, readonly string[]>;
  followUp?: FollowUpOutcome;
  fusedById: ReadonlyMap<string, FusedCandidate>;
  budget: number;
  timeZone?: string;
  routes: RecallResult['routes'];
  failures: readonly RouteFailure[];
  rewrittenQueries?: string[];
  ranges: readonly DateRange[];
  persona?: RecalledPersona;
  personaShare?: number;
  scenes?: RecalledScenes;
  scenesShare?: number;
}): RecallResult {
  const formatted = formatContext({
    ...personaForRecall(input.persona, input.personaShare),
    ...scenesForRecall(input.scenes, input.scenesShare ?? 0),
    memories: input.ranked.map((r) => r.memory),
    instructions: input.instructions,
    pastExchanges: toPastExchanges(input.exchanges),
    ...(input.injection ? { injection: input.injection } : {}),
    budget: input.budget,
    timeZone: input.timeZone,
  });
  // A found memory the persona states is in the context too (in the persona's words): it is listed.
  const included = new Set(formatted.included);
  for (const id of formatted.personaMemoryIds ?? []) included.add(id);
  if (input.carriedBy && input.carriedBy.size > 0) {
    const injectedMessages = new Set(formatted.includedMessageIds);
    for (const [id, messageIds] of input.carriedBy) if (messageIds.length > 0 && messageIds.every((m) => injectedMessages.has(m))) included.add(id);
  }
  // Built on every message, after Chroma's answer: plain loops, no closure or pair array per memory.
  const scoreOf = new Map<string, number>();
  for (const r of input.ranked) scoreOf.set(r.memory.id, r.score);
  const memories: RecalledMemory[] = [];
  const listed = new Set<string>();
  const list = (m: Memory) => {
    if (!included.has(m.id) || listed.has(m.id)) return;
    listed.add(m.id);
    memories.push({
      id: m.id,
      text: m.text,
      type: m.type,
      scope: m.scope,
      score: scoreOf.get(m.id) ?? 1,
      routes: input.fusedById.get(m.id)?.routes ?? ['instruction'],
      createdAt: isoInstant(m.createdAt),
      source: m.source,
      via: m.via,
    });
  };
  for (const m of input.instructions) list(m);
  for (const r of input.ranked) list(r.memory);
  const error = foldRouteFailures(input.failures);
  return {
    context: { system: formatted.system, userPrefix: formatted.userPrefix },
    memories,
    tokens: formatted.tokens,
    routes: input.routes,
    pastExchanges: recalledExchanges(input.exchanges, formatted.includedMessageIds),
    injectedMessageIds: formatted.includedMessageIds,
    ...(input.rewrittenQueries ? { rewrittenQueries: input.rewrittenQueries } : {}),
    ...(input.persona && formatted.personaMemoryIds ? { persona: { memoryIds: formatted.personaMemoryIds, builder: input.persona.builder, builtAt: input.persona.builtAt.toISOString() } } : {}),
    ...(input.ranges.length > 0 ? { dateRanges: input.ranges.map((r) => ({ text: r.text, start: r.start.toISOString(), end: r.end.toISOString() })) } : {}),
    ...(input.followUp ? { followUp: { memoryId: input.followUp.memory?.id ?? null } } : {}),
    ...(error ? { error } : {}),
  };
}
