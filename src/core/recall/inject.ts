/**
 * What goes into the context, in which order: memories and past exchanges compete for the token
 * budget on one score, and an exchange that only repeats a memory is not injected twice.
 *
 * The score is one scale for both because both sides are Reciprocal Rank Fusion sums of the same
 * kind of evidence (k = 60): a memory's is Σ 1/(60 + rank) over the memory routes (ANN, BM25,
 * time …), an exchange's over the exchange routes (BM25 over messages, the named dates, episodes,
 * vectors; that search fuses with a smaller k, so its sums are put on this scale first, see
 * {@link onMemoryRrfScale}). Rank r in the user's memories and rank r in the user's messages are the same vote. On
 * top, a memory carries its ranking factors (decay × importance × type, rank.ts); an exchange gets
 * the fixed prior of a medium-importance fact ({@link EXCHANGE_PRIOR}): it is raw, undistilled
 * text, so a memory found as well as an exchange wins, while an exchange found at the top of two
 * routes beats a memory the ANN route merely listed.
 *
 * Pure: no I/O, fakes in the unit tests.
 */
import type { FormattableMemory, InjectionItem, PastExchange } from './format';
import { importanceWeight, TYPE_WEIGHTS } from './rank';
import { RRF_K } from './rrf';

/** An exchange is scored like a medium-importance fact (type weight × importance weight at 0.5). */
export const EXCHANGE_PRIOR = TYPE_WEIGHTS.fact * importanceWeight(0.5);

/**
 * Texts this close (Jaccard of character bigrams, whitespace and punctuation ignored) say the same
 * thing: the memory was distilled from that line with, at most, a few words trimmed.
 */
export const NEAR_DUPLICATE_JACCARD = 0.8;

/**
 * A memory stated inside a longer line: this share of the memory's character bigrams appear in
 * the line ("我对花生过敏" in "顺便说一下，我对花生过敏，吃了会起疹子"). Only for memories of at least
 * {@link MIN_CONTAINED_BIGRAMS} bigrams, so a two-word memory is not found in every line.
 */
export const NEAR_DUPLICATE_CONTAINMENT = 0.9;
export const MIN_CONTAINED_BIGRAMS = 5;

/**
 * An RRF sum made with constant `fromK` over `votes` rankings, put on the scale of the memory
 * routes' fusion (k = {@link RRF_K}). The exchange search fuses with a small k (its first ranks are
 * the answers), so its sums are several times a memory's for the same ranks; this reads the rank
 * the votes stand for (exact when the routes agree on it) and scores that rank as the memory
 * fusion would, so "rank r in the user's messages" and "rank r in the user's memories" weigh the same.
 */
export function onMemoryRrfScale(score: number, votes: number, fromK: number): number {
  if (score <= 0 || votes <= 0) return 0;
  const rank = Math.max(1, votes / score - fromK);
  return votes / (RRF_K + rank);
}

/** A memory as the joint ranking needs it. */
export interface JointMemory {
  memory: FormattableMemory & { source?: { conversationId?: string; messageIds?: string[] } };
  /** Its final ranking score (fused relevance × decay × importance × type). */
  score: number;
}

/** An exchange as the joint ranking needs it. */
export interface JointExchange {
  key: string;
  conversationId: string;
  exchange: PastExchange;
  /** Its fused RRF score over the exchange routes. */
  score: number;
}

export interface JointInput {
  memories: readonly JointMemory[];
  exchanges: readonly JointExchange[];
  /** Memory ids and exchange keys that answer the query by construction (a vague follow-up's pain point); they lead. */
  pinned?: ReadonlySet<string>;
  /** At most this many exchanges (raw lines are long; more would crowd memories out). */
  maxExchanges: number;
  /**
   * Which side of a duplicate pair stays: the memory (default: the distilled, current form, fewer
   * tokens) or the exchange (for a question about what was said: the raw words and the reply are
   * the answer, and the memory is carried by its source).
   */
  prefer?: 'memory' | 'exchange';
}

export interface JointRanking {
  /** Best first; formatContext fills the budget in this order. */
  items: InjectionItem[];
  /** Joint score of each memory id and exchange key kept. */
  scores: Map<string, number>;
  /** Duplicate pairs found, and which side was dropped. */
  duplicates: { exchange: string; memory: string; dropped: 'memory' | 'exchange' }[];
  /** Memory id → key of the exchange that carries it (the memory itself was dropped in its favour). */
  carried: Map<string, string>;
}

/**
 * Each text's bigrams, kept: joint injection compares every memory with every exchange line, and
 * rebuilding the sets was 1.45 ms of a recall's 35 ms of CPU in the HTTP sweep's profile. Bounded
 * by clearing, since texts come from every user's recalls; the sets are never mutated.
 */
const BIGRAM_CACHE_LIMIT = 4096;
const bigramCache = new Map<string, ReadonlySet<string>>();

function bigrams(text: string): ReadonlySet<string> {
  let out = bigramCache.get(text);
  if (!out) {
    if (bigramCache.size >= BIGRAM_CACHE_LIMIT) bigramCache.clear();
    bigramCache.set(text, (out = computeBigrams(text)));
  }
  return out;
}

function computeBigrams(text: string): Set<string> {
  const chars = Array.from(text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]/gu, ''));
  const out = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
  if (chars.length === 1) out.add(chars[0]!);
  return out;
}

/** Jaccard similarity of the character bigrams of two texts (1 for identical, 0 for disjoint). */
export function bigramJaccard(a: string, b: string): number {
  const x = bigrams(a);
  const y = bigrams(b);
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const g of x) if (y.has(g)) shared++;
  return shared / (x.size + y.size - shared);
}

/** Share of the memory's character bigrams that the line contains (0 when the memory is too short to tell). */
export function bigramContainment(memory: string, line: string): number {
  const x = bigrams(memory);
  if (x.size < MIN_CONTAINED_BIGRAMS) return 0;
  const y = bigrams(line);
  let shared = 0;
  for (const g of x) if (y.has(g)) shared++;
  return shared / x.size;
}

/**
 * True when the exchange repeats the memory: it holds the memory's source message, or one of its
 * lines says the same thing as the memory (near-identical text) or states it whole inside a
 * longer sentence (the same fact said again in another conversation).
 */
export function exchangeDuplicates(memory: JointMemory['memory'], x: JointExchange): boolean {
  const src = memory.source;
  if (src?.messageIds && src.messageIds.length > 0 && (src.conversationId === undefined || src.conversationId === x.conversationId)) {
    if (src.messageIds.some((id) => x.exchange.messageIds.includes(id))) return true;
  }
  return [x.exchange.userText, x.exchange.assistantText].some(
    (line) => line.length > 0 && (bigramJaccard(memory.text, line) >= NEAR_DUPLICATE_JACCARD || bigramContainment(memory.text, line) >= NEAR_DUPLICATE_CONTAINMENT),
  );
}

/** True when two exchanges say the same thing: their user lines (or, without one, their replies) are near-identical. */
export function exchangesRepeat(a: PastExchange, b: PastExchange): boolean {
  const lineOf = (x: PastExchange): string => (x.userText.trim() !== '' ? x.userText : x.assistantText);
  const [x, y] = [lineOf(a), lineOf(b)];
  return x.trim() !== '' && y.trim() !== '' && bigramJaccard(x, y) >= NEAR_DUPLICATE_JACCARD;
}

/**
 * Orders memories and exchanges on one score (see the module comment), pinned items first. A
 * duplicate pair keeps one side (`prefer`); a pinned exchange is never dropped, and a kept
 * exchange competes with the better of its own and its memory's score. An exchange repeating a
 * better-ranked exchange is dropped. Ties keep memories first.
 */
export function rankForInjection(input: JointInput): JointRanking {
  const pinned = input.pinned ?? new Set<string>();
  const prefer = input.prefer ?? 'memory';
  const duplicates: JointRanking['duplicates'] = [];
  const carried = new Map<string, string>();
  const droppedMemories = new Set<string>();
  /** Memory id → score of the exchange dropped in its favour. */
  const lifted = new Map<string, number>();
  const exchanges: { x: JointExchange; score: number }[] = [];
  for (const x of input.exchanges) {
    if (exchanges.length >= input.maxExchanges) break;
    let score = x.score * EXCHANGE_PRIOR;
    if (!pinned.has(x.key)) {
      // The same thing said in two conversations is one piece of evidence: the better-ranked stays.
      if (exchanges.some((kept) => exchangesRepeat(kept.x.exchange, x.exchange))) continue;
      const dups = input.memories.filter((m) => !droppedMemories.has(m.memory.id) && exchangeDuplicates(m.memory, x));
      if (dups.length > 0 && (prefer === 'memory' || dups.some((m) => pinned.has(m.memory.id)))) {
        duplicates.push({ exchange: x.key, memory: dups[0]!.memory.id, dropped: 'exchange' });
        // The exchange's evidence is evidence for the memory it repeats: without it, a memory found
        // only weakly (listed late by one route) would fall to the budget and the answer be lost.
        const kept = dups[0]!.memory.id;
        lifted.set(kept, Math.max(lifted.get(kept) ?? 0, score));
        continue;
      }
      for (const m of dups) {
        duplicates.push({ exchange: x.key, memory: m.memory.id, dropped: 'memory' });
        droppedMemories.add(m.memory.id);
        carried.set(m.memory.id, x.key);
        score = Math.max(score, m.score);
      }
    }
    exchanges.push({ x, score });
  }
  type Scored = { item: InjectionItem; id: string; score: number; pinned: boolean; order: number; lift: number };
  const memories = input.memories.filter((m) => !droppedMemories.has(m.memory.id));
  const all: Scored[] = [
    ...memories.map((m, i) => ({ item: { kind: 'memory', memory: m.memory } as InjectionItem, id: m.memory.id, score: m.score, pinned: pinned.has(m.memory.id), order: i, lift: lifted.get(m.memory.id) ?? 0 })),
    ...exchanges.map(({ x, score }, i) => ({ item: { kind: 'exchange', exchange: x.exchange } as InjectionItem, id: x.key, score, pinned: pinned.has(x.key), order: memories.length + i, lift: 0 })),
  ];
  // Within each kind the given order stands (dates named by the query already come first there):
  // a memory is never placed above a better-ranked memory, only interleaved with exchanges. The
  // one exception is a memory that took a dropped exchange's place: it stands at least where that
  // exchange would have.
  const memoryFloor = running(all.filter((s) => s.item.kind === 'memory'));
  const exchangeFloor = running(all.filter((s) => s.item.kind === 'exchange'));
  const effective = (s: Scored): number => Math.max(s.lift, (s.item.kind === 'memory' ? memoryFloor : exchangeFloor).get(s.id) ?? s.score);
  all.sort((a, b) => Number(b.pinned) - Number(a.pinned) || effective(b) - effective(a) || a.order - b.order);
  return { items: all.map((s) => s.item), scores: new Map(all.map((s) => [s.id, Math.max(s.score, s.lift)])), duplicates, carried };
}

/**
 * The score each item of an already ordered list competes with: the minimum so far, so the
 * list's own order (e.g. the named dates first) survives the merge with the other kind.
 */
function running(list: readonly { id: string; score: number }[]): Map<string, number> {
  const out = new Map<string, number>();
  let floor = Number.POSITIVE_INFINITY;
  for (const s of list) {
    floor = Math.min(floor, s.score);
    out.set(s.id, floor);
  }
  return out;
}
