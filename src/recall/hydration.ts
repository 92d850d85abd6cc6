/**
 * Loading the memories fusion ranks, as soon as each route answers instead of after the slowest
 * one (issue #22): the statement of recall's short lists brings its memories and the BM25 hits'
 * rows, the ANN ids are loaded the moment Chroma answers, and fusion loads only what no route
 * brought (the recent, time, graph and rewrite routes' ids), usually nothing.
 */
import type { MemoryRepository } from '../core/ports/memory';
import type { Memory } from '../core/types';

export class Hydration {
  /** Active, unexpired memories read so far, by id. */
  private readonly rows = new Map<string, Memory>();
  /** Ids asked for already (found or not): never asked again. */
  private readonly asked = new Set<string>();
  private readonly loading: Promise<unknown>[] = [];

  constructor(
    private readonly memories: Pick<MemoryRepository, 'getActive'>,
    private readonly userId: string,
    private readonly now: Date,
  ) {}

  /**
   * Memories some route read with their rows: `ids` were asked (those not in `memories` are not
   * active); `read` settles with the rows. A failed read fails {@link complete}, as a failed load would.
   */
  track(read: Promise<{ ids: readonly string[]; memories: readonly Memory[] }>): void {
    const done = read.then(({ ids, memories }) => {
      for (const id of ids) this.asked.add(id);
      for (const m of memories) {
        this.asked.add(m.id);
        this.rows.set(m.id, m);
      }
    });
    done.catch(() => {});
    this.loading.push(done);
  }

  /** Starts loading the ids not asked for yet (one statement), beside whatever else runs. */
  load(ids: readonly string[]): void {
    const missing = [...new Set(ids)].filter((id) => !this.asked.has(id));
    if (missing.length === 0) return;
    for (const id of missing) this.asked.add(id);
    this.track(this.memories.getActive({ userId: this.userId, ids: missing, now: this.now }).then((memories) => ({ ids: missing, memories })));
  }

  /** The active memories among `ids`, in their order: waits for the loads started, then loads the rest in one statement. */
  async complete(ids: readonly string[]): Promise<Memory[]> {
    await Promise.all(this.loading);
    this.load(ids);
    await Promise.all(this.loading);
    return ids.flatMap((id) => {
      const m = this.rows.get(id);
      return m ? [m] : [];
    });
  }
}
