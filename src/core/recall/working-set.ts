/**
 * One user's active memories held in the recall process, with their BM25 postings, answering the
 * reads recall otherwise sends to PostgreSQL (the short lists, memory BM25, the hydration of
 * search hits) with the same rows in the same order. Pure: the adapter that loads it and keeps it
 * in step with the database is src/recall/working-set-cache.ts.
 *
 * Why it exists: on two cores shared by the API, PostgreSQL and Chroma, the statements of a warm
 * recall cost more CPU than the raw Chroma query recall is measured against (docs/benchmarks.md,
 * "The two-core arithmetic"); a user in the middle of a chat recalls every message, so their
 * memories are read again and again while barely changing.
 */
import type { Memory, MemoryType } from '../types';
import type { MemoryLists } from './memory-lists';
import { bm25AvgDocLength, bm25Score } from './bm25';

/** A memory's postings as its index row holds them: distinct terms, their counts, the document's length in tokens. */
export interface MemoryPostings {
  terms: readonly string[];
  tfs: readonly number[];
  docLength: number;
}

/**
 * Where the database stood when a working-set statement read it (migration 1797600000000).
 * `horizon`: the oldest transaction still running then; rows written by older ones were all read.
 * `registeredAt`: the user row's creation (null: no such user), so a user purged and registered
 * again is not taken for the one held. `deletedXid`: the last transaction that deleted one of the
 * user's memories. `truncations`: how often `memories` was truncated.
 */
export interface WorkingSetMark {
  horizon: bigint;
  registeredAt: string | null;
  deletedXid: bigint | null;
  truncations: string;
}

/** A memory row as last written, with the id of the transaction that wrote it (`version`). */
export interface WorkingSetRow {
  memory: Memory;
  version: bigint;
  postings: MemoryPostings;
}

export interface WorkingSetChanges {
  mark: WorkingSetMark;
  /** Rows written since the horizon asked for, whatever their status now. */
  rows: WorkingSetRow[];
  /** What recall reads beside memories, read in the same statement. */
  stablePrefix: Pick<MemoryLists, 'persona' | 'scenes' | 'history'>;
}

/** At most this many query terms are scored, the rarest first: the same bound as the SQL (bm25-sql.ts). */
const MAX_QUERY_TERMS = 32;

export class MemoryWorkingSet {
  private readonly byId = new Map<string, Memory>();
  private readonly lengths = new Map<string, number>();
  /** term → memory id → term frequency. */
  private readonly postings = new Map<string, Map<string, number>>();
  private readonly termsOf = new Map<string, readonly string[]>();
  private totalLength = 0;

  get size(): number {
    return this.byId.size;
  }

  /**
   * A row as the database has it now: an active memory is (re)indexed with its postings; any other
   * status takes it out, as the lifecycle takes a retired memory out of the postings.
   */
  apply(memory: Memory, postings: MemoryPostings | undefined): void {
    this.remove(memory.id);
    if (memory.status !== 'active') return;
    this.byId.set(memory.id, freeze(memory));
    const docLength = postings?.docLength ?? 0;
    this.lengths.set(memory.id, docLength);
    this.totalLength += docLength;
    const terms = postings?.terms ?? [];
    this.termsOf.set(memory.id, terms);
    terms.forEach((term, i) => {
      let list = this.postings.get(term);
      if (!list) this.postings.set(term, (list = new Map()));
      list.set(memory.id, postings!.tfs[i] ?? 1);
    });
  }

  remove(id: string): void {
    if (!this.byId.delete(id)) return;
    this.totalLength -= this.lengths.get(id) ?? 0;
    this.lengths.delete(id);
    for (const term of this.termsOf.get(id) ?? []) {
      const list = this.postings.get(term);
      list?.delete(id);
      if (list && list.size === 0) this.postings.delete(term);
    }
    this.termsOf.delete(id);
  }

  /** Active and unexpired at `now`, among `ids` (order not kept, as `getActive`'s). */
  getActive(ids: readonly string[], now: Date): Memory[] {
    const out: Memory[] = [];
    for (const id of new Set(ids)) {
      const m = this.byId.get(id);
      if (m && live(m, now)) out.push(m);
    }
    return out;
  }

  /**
   * The best `k` live memories of `types` with importance ≥ `minImportance`, by importance then last
   * update (`recall_top_by_type`, migration 1797400000000); `settledOnly` leaves pending ones out.
   */
  topByImportance(input: { types: readonly MemoryType[]; minImportance: number; now: Date; settledOnly: boolean; k: number }): Memory[] {
    const types = new Set(input.types);
    return topK(
      this.byId.values(),
      (m) => types.has(m.type) && m.importance >= input.minImportance && live(m, input.now) && !(input.settledOnly && m.pending),
      byImportance,
      input.k,
    );
  }

  /** The `k` last touched (expired ones included, as `recall_recent` reads them). */
  recent(input: { types: readonly MemoryType[] | null; k: number }): Memory[] {
    const types = input.types ? new Set(input.types) : null;
    return topK(this.byId.values(), (m) => !types || types.has(m.type), byRecency, input.k);
  }

  /** Confirmed global standing instructions, most important first. */
  instructions(input: { now: Date; k: number }): Memory[] {
    return topK(this.byId.values(), (m) => m.type === 'instruction' && m.scope === 'global' && !m.pending && live(m, input.now), byImportance, input.k);
  }

  /**
   * Okapi BM25 over the user's active memories, the `k` best (ties by id), expired ones included
   * as the SQL ranks them. Every posting of the scored terms is read: held in memory, the exact
   * score costs less than the SQL's cut.
   */
  bm25(queryTerms: readonly string[], k: number): { id: string; score: number }[] {
    const docCount = this.byId.size;
    if (docCount === 0) return [];
    const avgDocLength = bm25AvgDocLength(this.totalLength, docCount);
    const terms = [...new Set(queryTerms)]
      .flatMap((term) => {
        const list = this.postings.get(term);
        return list ? [{ term, list }] : [];
      })
      .sort((a, b) => a.list.size - b.list.size || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
      .slice(0, MAX_QUERY_TERMS);
    const scores = new Map<string, number>();
    for (const { list } of terms) {
      for (const [id, tf] of list) {
        const s = bm25Score({ tf, docLength: this.lengths.get(id) ?? 0, avgDocLength, docFrequency: list.size, docCount });
        scores.set(id, (scores.get(id) ?? 0) + s);
      }
    }
    const hits = [...scores].map(([id, score]) => ({ id, score }));
    return topK(hits.values(), () => true, (a, b) => b.score - a.score || byId(a, b), k);
  }

  get(id: string): Memory | undefined {
    return this.byId.get(id);
  }
}

export function live(m: Memory, now: Date): boolean {
  return m.status === 'active' && (m.expiresAt === null || m.expiresAt.getTime() > now.getTime());
}

// Equal keys are in no order the SQL promises either; the id makes two processes agree.
function byImportance(a: Memory, b: Memory): number {
  return b.importance - a.importance || b.updatedAt.getTime() - a.updatedAt.getTime() || byId(a, b);
}

function byRecency(a: Memory, b: Memory): number {
  return b.updatedAt.getTime() - a.updatedAt.getTime() || b.importance - a.importance || byId(a, b);
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The first `k` of `items` that pass `keep`, in `order`, without sorting them all (k is a few dozen, items thousands). */
function topK<T>(items: Iterable<T>, keep: (item: T) => boolean, order: (a: T, b: T) => number, k: number): T[] {
  const best: T[] = [];
  if (k <= 0) return best;
  for (const item of items) {
    if (!keep(item)) continue;
    if (best.length === k) {
      if (order(item, best[k - 1]!) >= 0) continue;
      best.pop();
    }
    let i = best.length;
    while (i > 0 && order(item, best[i - 1]!) < 0) i--;
    best.splice(i, 0, item);
  }
  return best;
}

/** Shared by every request that reads the user: a caller that changed one would change them all. */
function freeze(m: Memory): Memory {
  for (const list of [m.emotionTags, m.associatedTopics, m.keywords]) Object.freeze(list);
  return Object.freeze(m);
}
