/**
 * The working sets of the users chatting now, held by this process (core/recall/working-set.ts),
 * so that a warm recall sends PostgreSQL one small statement instead of its short lists, memory
 * BM25 and hydration (issue #22: recall near the raw Chroma query on two cores).
 *
 * Never staler than the database: every recall that reads a held working set first asks
 * PostgreSQL, in one statement started beside the Chroma query, for the user's rows written since
 * the set was last brought up to date (migration 1797600000000), with the persona, scene block and
 * history recall reads anyway. A deletion, a purge, a new registration of the same id or a
 * truncation drops the set; the next recalls read through the SQL statements until it is loaded
 * again in the background. Other processes' writes are seen the same way as this one's.
 */
import { importantTypes, type Bm25WithMemories, type MemoryLists, type MemoryListsInput, type MemoryListsSource, type RecallReads, type WorkingSets } from '../core/recall/memory-lists';
import { metrics } from '../observability/metrics';
import type { MemoryRepository } from '../core/ports/memory';
import { MemoryWorkingSet, live, type WorkingSetChanges, type WorkingSetMark, type WorkingSetRow } from '../core/recall/working-set';
import { termFrequencies } from '../core/text/tokenize';
import type { Memory } from '../core/types';

/** What the cache needs of the database (PostgresWorkingSetSource). */
export interface WorkingSetSource {
  load(userId: string, limit: number): Promise<{ mark: WorkingSetMark; rows: WorkingSetRow[] } | 'tooMany'>;
  changes(userId: string, now: Date, horizon: bigint, limit: number): Promise<WorkingSetChanges>;
}

export interface WorkingSetCacheOptions {
  /** Memories held across all users; 0 turns the cache off. */
  maxMemories: number;
  /** A set is loaded again after this long, whatever it saw (a restored backup moves no mark). */
  maxAgeMs?: number;
  /** A user is loaded when they recall again within this long: a single recall does not pay a load. */
  interestMs?: number;
  /** More changed rows than this in one recall: the set is loaded again instead. */
  maxChanges?: number;
  clock?: () => number;
}

interface Entry {
  readonly set: MemoryWorkingSet;
  mark: WorkingSetMark;
  /** The writing transaction of each row applied (removed ones too), so an older answer never overwrites a newer one. */
  readonly versions: Map<string, bigint>;
  readonly loadedAt: number;
  usedAt: number;
}

/** A user whose set is held, as one recall sees it once brought up to date. */
interface Fresh {
  set: MemoryWorkingSet;
  stablePrefix: WorkingSetChanges['stablePrefix'];
}

/** Users remembered as recalled once, oldest forgotten first. */
const INTEREST_LIMIT = 10_000;

export class WorkingSetCache implements WorkingSets {
  /** Held sets in least-recently-used order (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();
  private readonly interest = new Map<string, number>();
  private readonly loading = new Set<string>();
  /** Users past the limit, until when not to try again. */
  private readonly tooMany = new Map<string, number>();
  private held = 0;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  /** Recalls by where they read (also the metric jarvis_recall_working_set_reads_total). */
  readonly reads = { held: 0, sql: 0, dropped: 0 };
  private readonly maxAgeMs: number;
  private readonly interestMs: number;
  private readonly maxChanges: number;
  private readonly clock: () => number;

  constructor(
    private readonly source: WorkingSetSource,
    private readonly opts: WorkingSetCacheOptions,
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 10 * 60_000;
    this.interestMs = opts.interestMs ?? 10 * 60_000;
    this.maxChanges = opts.maxChanges ?? 500;
    this.clock = opts.clock ?? Date.now;
  }

  /** Memories held now (for metrics and tests). */
  get heldMemories(): number {
    return this.held;
  }

  /** Whether `userId`'s memories are held now. */
  isHeld(userId: string): boolean {
    return this.entries.has(userId);
  }

  /**
   * The reads of one recall of `userId` at `now`: from the held set brought up to date by one
   * statement started now, or, when none is held, through `fallback` (the SQL statements) while
   * the set is loaded for the next recalls.
   */
  forRequest(userId: string, now: Date, fallback: { lists: MemoryListsSource; memories: Pick<MemoryRepository, 'getActive'> }): RecallReads {
    const entry = this.opts.maxMemories > 0 ? this.entries.get(userId) : undefined;
    if (!entry || this.clock() - entry.loadedAt > this.maxAgeMs) {
      if (entry) this.drop(userId);
      this.noteInterest(userId);
      this.count('sql');
      return { memoryLists: (i) => fallback.lists.memoryLists(i), bm25WithMemories: (i) => fallback.lists.bm25WithMemories(i), getActive: (i) => fallback.memories.getActive(i) };
    }
    this.entries.delete(userId);
    this.entries.set(userId, entry);
    entry.usedAt = this.clock();
    // A failed statement drops the set, and this request reads through SQL, each read on its own
    // as before: one failed statement does not fail the lists, BM25 and the hydration together.
    const fresh: Promise<Fresh | undefined> = this.refresh(userId, entry, now).catch(() => undefined);
    return {
      memoryLists: async (input) => {
        const f = await fresh;
        return f ? listsOf(f, input) : fallback.lists.memoryLists(input);
      },
      bm25WithMemories: async (input) => {
        const f = await fresh;
        return f ? bm25Of(f.set, input) : fallback.lists.bm25WithMemories(input);
      },
      getActive: async (input) => {
        const f = await fresh;
        return f ? f.set.getActive(input.ids, input.now ?? new Date(this.clock())) : fallback.memories.getActive(input);
      },
    };
  }

  /**
   * Drops the sets not read for `interestMs` or loaded more than `maxAgeMs` ago. Run every minute
   * ({@link startSweeping}): a purged user's memories leave a process that never recalls them
   * again within that time, not only when it next reads them.
   */
  sweep(): void {
    const t = this.clock();
    for (const [userId, entry] of this.entries) {
      if (t - entry.usedAt > this.interestMs || t - entry.loadedAt > this.maxAgeMs) this.drop(userId, entry);
    }
    for (const [userId, until] of this.tooMany) if (until <= t) this.tooMany.delete(userId);
  }

  /** Sweeps every minute until {@link close}; the timer never keeps the process alive. */
  startSweeping(everyMs = 60_000): this {
    this.sweeper ??= setInterval(() => this.sweep(), everyMs);
    this.sweeper.unref();
    return this;
  }

  /** Stops sweeping and forgets every held set. */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.entries.clear();
    this.held = 0;
  }

  private async refresh(userId: string, entry: Entry, now: Date): Promise<Fresh | undefined> {
    let changes: WorkingSetChanges;
    try {
      changes = await this.source.changes(userId, now, entry.mark.horizon, this.maxChanges);
    } catch (err) {
      this.drop(userId, entry);
      this.count('dropped');
      throw err;
    }
    const { mark } = changes;
    const moved =
      mark.registeredAt !== entry.mark.registeredAt ||
      mark.truncations !== entry.mark.truncations ||
      mark.deletedXid !== entry.mark.deletedXid ||
      changes.rows.length >= this.maxChanges;
    if (moved) {
      // A deletion leaves no row to read: the user is read through SQL until loaded again.
      this.drop(userId, entry);
      this.count('dropped');
      if (mark.registeredAt !== null) this.noteInterest(userId, true);
      return undefined;
    }
    const before = entry.set.size;
    for (const row of changes.rows) apply(entry, row);
    if (mark.horizon > entry.mark.horizon) entry.mark = { ...entry.mark, horizon: mark.horizon };
    if (this.entries.get(userId) === entry) {
      this.held += entry.set.size - before;
      this.evict(entry);
    }
    this.count('held');
    return { set: entry.set, stablePrefix: changes.stablePrefix };
  }

  private count(outcome: 'held' | 'sql' | 'dropped'): void {
    this.reads[outcome]++;
    metrics.workingSetRead(outcome);
  }

  /** A recall of a user not held: the second within `interestMs` loads their set. */
  private noteInterest(userId: string, now = false): void {
    if (this.opts.maxMemories <= 0 || this.loading.has(userId)) return;
    const t = this.clock();
    const refusedUntil = this.tooMany.get(userId);
    if (refusedUntil !== undefined && refusedUntil > t) return;
    const seen = this.interest.get(userId);
    this.interest.delete(userId);
    if (!now && (seen === undefined || t - seen > this.interestMs)) {
      this.interest.set(userId, t);
      // The interest map is bounded like the sets: the oldest entries go first.
      while (this.interest.size > INTEREST_LIMIT) this.interest.delete(this.interest.keys().next().value!);
      return;
    }
    this.loading.add(userId);
    void this.load(userId).finally(() => this.loading.delete(userId));
  }

  private async load(userId: string): Promise<void> {
    try {
      const loaded = await this.source.load(userId, this.opts.maxMemories);
      if (loaded === 'tooMany') {
        this.tooMany.set(userId, this.clock() + this.maxAgeMs);
        return;
      }
      const entry: Entry = { set: MemoryWorkingSet.of(loaded.rows), mark: loaded.mark, versions: new Map(loaded.rows.map((r) => [r.memory.id, r.version])), loadedAt: this.clock(), usedAt: this.clock() };
      this.drop(userId);
      this.entries.set(userId, entry);
      this.held += entry.set.size;
      this.evict();
    } catch {
      // Recall reads through SQL meanwhile; the next recall tries again.
    }
  }

  /** Least recently used first, never `keep`. */
  private evict(keep?: Entry): void {
    for (const [userId, entry] of this.entries) {
      if (this.held <= this.opts.maxMemories) return;
      if (entry === keep) continue;
      this.drop(userId, entry);
    }
  }

  private drop(userId: string, only?: Entry): void {
    const entry = this.entries.get(userId);
    if (!entry || (only && entry !== only)) return;
    this.entries.delete(userId);
    this.held -= entry.set.size;
  }
}

function apply(entry: Entry, row: WorkingSetRow): void {
  const known = entry.versions.get(row.memory.id);
  if (known !== undefined && known >= row.version) return;
  entry.versions.set(row.memory.id, row.version);
  entry.set.apply(row.memory, row.postings);
}

/** The short lists as PostgresRecallLists reads them, from the held set. */
function listsOf({ set, stablePrefix }: Fresh, input: MemoryListsInput): MemoryLists {
  const { now } = input;
  const important = input.important
    ? set.topByImportance({ types: importantTypes(input.important.types), minImportance: input.important.minImportance, now, settledOnly: false, k: input.important.k })
    : [];
  const byTypes = input.byTypes && input.byTypes.types.length > 0 ? set.topByImportance({ types: input.byTypes.types, minImportance: -Infinity, now, settledOnly: true, k: input.byTypes.k }) : [];
  const recent = input.recent ? set.recent({ types: input.recent.types && input.recent.types.length > 0 ? input.recent.types : null, k: input.recent.k }) : [];
  const instructions = input.instructions ? set.instructions({ now, k: input.instructions.k }) : [];
  return {
    important: important.map((m) => m.id),
    byTypes,
    recent: recent.map((m) => m.id),
    instructions,
    memories: [...important, ...byTypes, ...instructions, ...recent.filter((m) => live(m, now))],
    ...(input.persona && stablePrefix.persona ? { persona: stablePrefix.persona } : {}),
    ...(input.scenes && stablePrefix.scenes ? { scenes: stablePrefix.scenes } : {}),
    ...(input.history && stablePrefix.history ? { history: stablePrefix.history } : {}),
  };
}

function bm25Of(set: MemoryWorkingSet, input: { tokens: string[]; k: number; now: Date }): Bm25WithMemories {
  const hits = set.bm25([...termFrequencies(input.tokens).keys()], input.k);
  const memories = hits.flatMap((h) => {
    const m: Memory | undefined = set.get(h.id);
    return m && live(m, input.now) ? [m] : [];
  });
  return { hits, memories };
}
