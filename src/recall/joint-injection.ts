/**
 * Memories and past exchanges on one score for the budget (core/recall/inject.ts), the vague
 * follow-up's pain point and exchange pinned first.
 */
import type { RankedExchange } from '../core/recall/exchanges';
import { onMemoryRrfScale, rankForInjection, type JointExchange } from '../core/recall/inject';
import { rankMemories, type RankedMemory } from '../core/recall/rank';
import type { Memory } from '../core/types';
import { MAX_PAST_EXCHANGES, toPastExchanges } from './episodic-recall';
import { EXCHANGE_RRF_K } from './exchange-search';
import type { FollowUpOutcome } from './follow-up-route';

/**
 * Memories and exchanges on one score for the budget (inject.ts): the follow-up's pain point and
 * exchange lead, an exchange that repeats a memory is dropped, at most MAX_PAST_EXCHANGES stay.
 */
export function jointInjection(input: {
  ranked: readonly RankedMemory<Memory>[];
  exchanges: readonly RankedExchange[];
  followUp?: FollowUpOutcome;
  /** Of a duplicate pair the exchange stays (the query asks what was said, and the budget is not tight). */
  preferExchanges: boolean;
  now: Date;
}): {
  ranked: RankedMemory<Memory>[];
  exchanges: RankedExchange[];
  order: ReturnType<typeof rankForInjection>;
  /** Memory id → message ids of the exchange that carries it. */
  carriedBy: Map<string, readonly string[]>;
} {
  const ranked = [...input.ranked];
  const exchanges = [...input.exchanges];
  const pinned = new Set<string>();
  const fu = input.followUp;
  if (fu?.memory) {
    pinned.add(fu.memory.id);
    if (!ranked.some((r) => r.memory.id === fu.memory!.id)) ranked.unshift(...rankMemories([{ memory: fu.memory, relevance: ranked[0]?.relevance ?? 1 }], { now: input.now }));
  }
  if (fu?.exchange) {
    pinned.add(fu.exchange.key);
    const at = exchanges.findIndex((x) => x.key === fu.exchange!.key);
    if (at >= 0) exchanges.splice(at, 1);
    exchanges.unshift(fu.exchange);
  }
  const past = toPastExchanges(exchanges);
  // The exchange search fuses with its own small k: its sums are put on the memories' RRF scale.
  const joint: JointExchange[] = exchanges.map((x, i) => ({ key: x.key, conversationId: x.conversationId, exchange: past[i]!, score: onMemoryRrfScale(x.score, x.routes.length, EXCHANGE_RRF_K) }));
  const order = rankForInjection({
    memories: ranked.map((r) => ({ memory: r.memory, score: r.score })),
    exchanges: joint,
    pinned,
    maxExchanges: MAX_PAST_EXCHANGES,
    prefer: input.preferExchanges ? 'exchange' : 'memory',
  });
  const kept = new Set(order.items.flatMap((i) => (i.kind === 'exchange' ? [i.exchange] : [])));
  const messagesOf = new Map(exchanges.map((x) => [x.key, x.messageIds]));
  const carriedBy = new Map([...order.carried].map(([memoryId, key]) => [memoryId, messagesOf.get(key) ?? []]));
  return { ranked, exchanges: exchanges.filter((_, i) => kept.has(past[i]!)), order, carriedBy };
}
