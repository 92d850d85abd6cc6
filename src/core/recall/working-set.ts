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
import { BM25_B, BM25_K1, bm25AvgDocLength, bm25Idf } from './bm25';

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

/** A held memory, its distinct terms, and the slot of its scoring state. */
interface Doc {
  readonly memory: Memory;
  readonly length: number;
  readonly terms: readonly string[];
  readonly slot: number;
}

/**
 * One term's postings: the slots of the memories that hold it and its count in each, in two
 * arrays of small integers that a query walks in order (a removal swaps the last entry in: the
 * order of a list changes no score, since ties are broken by id).
 */
interface PostingList {
  readonly slots: number[];
  readonly tfs: number[];
}

/**
 * Memories kept in the orders recall reads them, per type, so a list walks only the first few
 * entries of its types instead of every memory (a scan per list was most of a recall's CPU).
 */
class OrderedByType {
  private readonly lists = new Map<MemoryType, Memory[]>();

  constructor(private readonly order: (a: Memory, b: Memory) => number) {}

  add(m: Memory): void {
    let list = this.lists.get(m.type);
    if (!list) this.lists.set(m.type, (list = []));
    list.splice(this.position(list, m), 0, m);
  }

  /** Many at once: appended, then each list sorted once (a load of 100k inserted one by one moved each list's tail every time). */
  addAll(memories: readonly Memory[]): void {
    for (const m of memories) {
      let list = this.lists.get(m.type);
      if (!list) this.lists.set(m.type, (list = []));
      list.push(m);
    }
    for (const list of this.lists.values()) list.sort(this.order);
  }

  remove(m: Memory): void {
    const list = this.lists.get(m.type);
    if (!list) return;
    const i = this.position(list, m);
    if (list[i] === m) list.splice(i, 1);
  }

  /** Up to `kPerType` entries of each type that `keep` takes, in order, each type's walk ended early by `stop`; then the first `kPerType` of them all. */
  walk(types: Iterable<MemoryType>, keep: (m: Memory) => boolean, stop: (m: Memory) => boolean, kPerType: number): Memory[] {
    const out: Memory[] = [];
    for (const type of new Set(types)) {
      let kept = 0;
      for (const m of this.lists.get(type) ?? []) {
        if (kept >= kPerType || stop(m)) break;
        if (!keep(m)) continue;
        out.push(m);
        kept++;
      }
    }
    return out.sort(this.order).slice(0, kPerType);
  }

  types(): MemoryType[] {
    return [...this.lists.keys()];
  }

  /** The first index whose entry does not come before `m` (entries are unique in the order: the id breaks ties). */
  private position(list: readonly Memory[], m: Memory): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.order(list[mid]!, m) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export class MemoryWorkingSet {
  private readonly docs = new Map<string, Doc>();
  private readonly postings = new Map<string, PostingList>();
  /*
   * The scoring state of each held memory by slot, in flat arrays that a query reads and writes
   * for every posting it walks, instead of fields of an object per memory reached through a Map's
   * callback (~170 against ~225 us per chat query alone; docs/benchmarks.md). A removed memory's
   * slot is given to the next one added.
   */
  private readonly bySlot: (Doc | null)[] = [];
  private readonly lengths: number[] = [];
  private stamps = new Int32Array(64);
  private scores = new Float64Array(64);
  private idKeys = new Float64Array(64);
  private readonly freeSlots: number[] = [];
  private touched = new Int32Array(256);
  private readonly byImportance = new OrderedByType(byImportance);
  private readonly byRecency = new OrderedByType(byRecency);
  private totalLength = 0;
  private queries = 0;

  get size(): number {
    return this.docs.size;
  }

  /** A user's set as loaded: each row's memory (active ones kept) with its postings. */
  static of(rows: readonly { memory: Memory; postings: MemoryPostings }[]): MemoryWorkingSet {
    const set = new MemoryWorkingSet();
    const added: Memory[] = [];
    for (const { memory, postings } of rows) {
      if (memory.status !== 'active' || set.docs.has(memory.id)) continue;
      added.push(set.index(memory, postings));
    }
    set.byImportance.addAll(added);
    set.byRecency.addAll(added);
    return set;
  }

  /**
   * A row as the database has it now: an active memory is (re)indexed with its postings; any other
   * status takes it out, as the lifecycle takes a retired memory out of the postings.
   */
  apply(memory: Memory, postings: MemoryPostings | undefined): void {
    this.remove(memory.id);
    if (memory.status !== 'active') return;
    const held = this.index(memory, postings);
    this.byImportance.add(held);
    this.byRecency.add(held);
  }

  /** Holds the memory and its postings; the orders are the caller's. */
  private index(memory: Memory, postings: MemoryPostings | undefined): Memory {
    const slot = this.freeSlots.pop() ?? this.newSlot();
    const terms: string[] = [];
    const doc: Doc = { memory: freeze(memory), length: postings?.docLength ?? 0, terms, slot };
    this.docs.set(memory.id, doc);
    this.bySlot[slot] = doc;
    this.lengths[slot] = doc.length;
    this.idKeys[slot] = idOrderKey(memory.id);
    this.totalLength += doc.length;
    postings?.terms.forEach((term, i) => {
      const tf = postings.tfs[i] ?? 1;
      let list = this.postings.get(term);
      if (!list) this.postings.set(term, (list = { slots: [], tfs: [] }));
      // A term listed twice keeps its last count, as one posting per term and memory does.
      const last = list.slots.length - 1;
      if (list.slots[last] === slot) list.tfs[last] = tf;
      else {
        list.slots.push(slot);
        list.tfs.push(tf);
        terms.push(term);
      }
    });
    return doc.memory;
  }

  private newSlot(): number {
    const slot = this.bySlot.length;
    this.bySlot.push(null);
    this.lengths.push(0);
    if (slot >= this.scores.length) {
      this.scores = doubled(this.scores);
      this.stamps = doubled(this.stamps);
      this.idKeys = doubled(this.idKeys);
    }
    return slot;
  }

  remove(id: string): void {
    const doc = this.docs.get(id);
    if (!doc) return;
    this.docs.delete(id);
    this.totalLength -= doc.length;
    for (const term of doc.terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const at = list.slots.lastIndexOf(doc.slot);
      if (at < 0) continue;
      list.slots[at] = list.slots[list.slots.length - 1]!;
      list.tfs[at] = list.tfs[list.tfs.length - 1]!;
      list.slots.pop();
      list.tfs.pop();
      if (list.slots.length === 0) this.postings.delete(term);
    }
    this.bySlot[doc.slot] = null;
    this.freeSlots.push(doc.slot);
    this.byImportance.remove(doc.memory);
    this.byRecency.remove(doc.memory);
  }

  get(id: string): Memory | undefined {
    return this.docs.get(id)?.memory;
  }

  /** Active and unexpired at `now`, among `ids` (order not kept, as `getActive`'s). */
  getActive(ids: readonly string[], now: Date): Memory[] {
    const out: Memory[] = [];
    for (const id of new Set(ids)) {
      const m = this.docs.get(id)?.memory;
      if (m && live(m, now)) out.push(m);
    }
    return out;
  }

  /**
   * The best `k` live memories of `types` with importance ≥ `minImportance`, by importance then last
   * update: each type's best k, then the best k of those (`recall_top_by_type`, migration
   * 1797400000000); `settledOnly` leaves pending ones out.
   */
  topByImportance(input: { types: readonly MemoryType[]; minImportance: number; now: Date; settledOnly: boolean; k: number }): Memory[] {
    return this.byImportance.walk(
      input.types,
      (m) => live(m, input.now) && !(input.settledOnly && m.pending),
      (m) => m.importance < input.minImportance,
      input.k,
    );
  }

  /** The `k` last touched (expired ones included, as `recall_recent` reads them). */
  recent(input: { types: readonly MemoryType[] | null; k: number }): Memory[] {
    return this.byRecency.walk(input.types ?? this.byRecency.types(), () => true, () => false, input.k);
  }

  /** Confirmed global standing instructions, most important first. */
  instructions(input: { now: Date; k: number }): Memory[] {
    return this.byImportance.walk(['instruction'], (m) => m.scope === 'global' && !m.pending && live(m, input.now), () => false, input.k);
  }

  /**
   * Okapi BM25 over the user's active memories, the `k` best (ties by id), expired ones included
   * as the SQL ranks them. Every posting of the scored terms is read: held in memory, the exact
   * score costs less than the SQL's cut. The same formula as `bm25Score`, with each term's idf
   * computed once (test/working-set.test.ts compares the two).
   */
  bm25(queryTerms: readonly string[], k: number): { id: string; score: number }[] {
    const docCount = this.docs.size;
    if (docCount === 0 || k <= 0) return [];
    const avgDocLength = bm25AvgDocLength(this.totalLength, docCount);
    // A term asked twice is scored once: sorted, the copies sit side by side.
    const found: { term: string; list: PostingList }[] = [];
    for (const term of queryTerms) {
      const list = this.postings.get(term);
      if (list) found.push({ term, list });
    }
    found.sort((a, b) => a.list.slots.length - b.list.slots.length || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
    const terms: PostingList[] = [];
    for (let i = 0; i < found.length && terms.length < MAX_QUERY_TERMS; i++) if (i === 0 || found[i]!.term !== found[i - 1]!.term) terms.push(found[i]!.list);
    // A stamp per query marks the slots it scored; it starts again before it would overflow.
    if (this.queries >= 0x7fffffff) {
      this.queries = 0;
      this.stamps.fill(0);
    }
    const query = ++this.queries;
    // The slots this query scored, in a buffer kept between queries: grown to thousands by every
    // query, a new array was a tenth of what a recall allocated.
    let touched = this.touched;
    let scored = 0;
    const { lengths, stamps, scores } = this;
    const k1 = BM25_K1;
    const lengthWeight = BM25_B / avgDocLength;
    for (const list of terms) {
      const idf = bm25Idf(list.slots.length, docCount);
      const { slots, tfs } = list;
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i]!;
        const tf = tfs[i]!;
        const s = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - BM25_B + lengthWeight * lengths[slot]!));
        if (stamps[slot] !== query) {
          stamps[slot] = query;
          scores[slot] = 0;
          if (scored === touched.length) this.touched = touched = doubled(touched);
          touched[scored++] = slot;
        }
        scores[slot] = scores[slot]! + s;
      }
    }
    const best = this.bestByScore(touched, scored, k);
    const hits: { id: string; score: number }[] = [];
    for (let i = 0; i < best.length; i++) hits.push({ id: this.bySlot[best[i]!]!.memory.id, score: scores[best[i]!]! });
    return hits;
  }

  /**
   * The `k` best of the scored `slots`, ties by id, without sorting them all (k is a few dozen,
   * slots thousands). Compares numbers in line: a comparator called per memory was a third of a
   * held BM25.
   */
  private bestByScore(slots: Int32Array, count: number, k: number): Int32Array {
    const { scores, idKeys, bySlot } = this;
    // Ties by id, through the ids' leading code units first: chat memories tie by the hundred, and
    // reading and comparing the id strings was most of a held BM25 (docs/benchmarks.md).
    const before = (a: number, b: number) =>
      scores[a]! > scores[b]! || (scores[a] === scores[b] && (idKeys[a]! < idKeys[b]! || (idKeys[a] === idKeys[b] && bySlot[a]!.memory.id < bySlot[b]!.memory.id)));
    if (k <= 0) return new Int32Array(0);
    // Kept in a typed array shifted in place: an array spliced on every insertion reallocated its
    // store, most of what a held BM25 allocated.
    const best = new Int32Array(Math.min(k, count));
    let kept = 0;
    // Once k are kept, most slots score below the last of them: one comparison turns them away.
    let floor = -Infinity;
    for (let s = 0; s < count; s++) {
      const slot = slots[s]!;
      if (scores[slot]! < floor) continue;
      if (kept === k) {
        if (!before(slot, best[k - 1]!)) continue;
        kept--;
      }
      let i = kept;
      while (i > 0 && before(slot, best[i - 1]!)) {
        best[i] = best[i - 1]!;
        i--;
      }
      best[i] = slot;
      kept++;
      if (kept === k) floor = scores[best[k - 1]!]!;
    }
    return kept === best.length ? best : best.subarray(0, kept);
  }
}

/** `array` copied into one twice its length. */
function doubled<T extends Int32Array | Float64Array>(array: T): T {
  const grown = new (array.constructor as new (length: number) => T)(array.length * 2);
  grown.set(array);
  return grown;
}

/**
 * The first three UTF-16 code units of `id` as one number (each unit + 1, 0 past the end, in 17
 * bits): numbers that differ order their ids as `<` does; equal ones leave it to the strings.
 */
function idOrderKey(id: string): number {
  const unit = (i: number) => (i < id.length ? id.charCodeAt(i) + 1 : 0);
  return unit(0) * 2 ** 34 + unit(1) * 2 ** 17 + unit(2);
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

/** Shared by every request that reads the user: a caller that changed one would change them all. */
function freeze(m: Memory): Memory {
  for (const list of [m.emotionTags, m.associatedTopics, m.keywords]) Object.freeze(list);
  return Object.freeze(m);
}
