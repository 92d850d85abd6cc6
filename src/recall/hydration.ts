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
   * active); `read` settles with the rows. A failed read leaves its ids unasked, so
   * {@link complete} loads them in its own statement: a route whose statement failed does not take
   * the other routes' memories down with it.
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
    const missing: string[] = [];
    for (const id of ids) {
      if (this.asked.has(id)) continue;
      this.asked.add(id);
      missing.push(id);
    }
    if (missing.length === 0) return;
    const read = this.memories.getActive({ userId: this.userId, ids: missing, now: this.now }).then((memories) => ({ ids: missing, memories }));
    read.catch(() => {
      for (const id of missing) this.asked.delete(id);
    });
    this.track(read);
  }

  /**
   * The active memories among `ids`, in their order: waits for the reads started, then loads in
   * one statement whatever they did not bring (a failed read's ids included). Only that last load's
   * failure fails the hydration, as the single load before issue #22 did.
   */
  async complete(ids: readonly string[]): Promise<Memory[]> {
    await Promise.allSettled(this.loading);
    const started = this.loading.length;
    this.load(ids);
    // Usually every id was asked for already (the routes' reads brought them): nothing to wait for.
    if (this.loading.length > started) await Promise.all(this.loading.slice(started));
    const found: Memory[] = [];
    for (const id of ids) {
      const m = this.rows.get(id);
      if (m) found.push(m);
    }
    return found;
  }
}
