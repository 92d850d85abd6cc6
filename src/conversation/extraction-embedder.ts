import type { Embedder, EmbeddingLane } from '../core/ports/memory';

/** Texts in one request at most: the size the endpoint's interactive lane sends anyway. */
const MAX_BATCH = 32;

interface Waiting {
  texts: string[];
  resolve(vectors: number[][]): void;
  reject(err: unknown): void;
}

/**
 * The embedder of a worker's extraction decisions. Each decision embeds its one candidate, and a
 * worker runs the decisions of many conversations at once, each in its own activity; the e5
 * server computes one request at a time, and a request of eight short texts costs about what two
 * of one text cost. So document requests that arrive while one of this process's requests is on
 * the wire wait for it and then go together as one request (natural batching: no delay when the
 * embedder is idle, larger batches the busier it is), and the same text asked for twice in a
 * batch is embedded once. Queries pass through untouched (recall has its own cache).
 *
 * A failed request fails every decision in it; each is an activity and is retried as before.
 */
export function batchingEmbedder(inner: Embedder, maxBatch = MAX_BATCH): Embedder {
  const lanes = new Map<EmbeddingLane, { queue: Waiting[]; busy: boolean }>();

  const pump = (lane: EmbeddingLane): void => {
    const state = lanes.get(lane)!;
    if (state.busy || state.queue.length === 0) return;
    // Whole callers only, so each gets its vectors from one request; at least one caller.
    const batch: Waiting[] = [];
    const distinct = new Map<string, number>();
    while (state.queue.length > 0) {
      const next = state.queue[0]!;
      const added = next.texts.filter((t) => !distinct.has(t)).length;
      if (batch.length > 0 && distinct.size + added > maxBatch) break;
      state.queue.shift();
      batch.push(next);
      for (const t of next.texts) if (!distinct.has(t)) distinct.set(t, distinct.size);
    }
    state.busy = true;
    // Called inside a promise: an embedder that throws before returning one must fail this batch's
    // decisions, not escape from the setImmediate callback and take the worker down.
    Promise.resolve()
      .then(() => inner.embedDocuments({ texts: [...distinct.keys()], lane }))
      .then(
        (vectors) => {
          for (const w of batch) w.resolve(w.texts.map((t) => vectors[distinct.get(t)!]!));
        },
        (err: unknown) => {
          for (const w of batch) w.reject(err);
        },
      )
      .finally(() => {
        state.busy = false;
        pump(lane);
      });
  };

  return {
    embedQuery: (input) => inner.embedQuery(input),
    embedDocuments({ texts, lane = 'interactive' }) {
      if (texts.length === 0) return Promise.resolve([]);
      if (!lanes.has(lane)) lanes.set(lane, { queue: [], busy: false });
      return new Promise<number[][]>((resolve, reject) => {
        lanes.get(lane)!.queue.push({ texts, resolve, reject });
        // A macrotask later, so decisions whose turn came in the same tick share the first request too.
        setImmediate(() => pump(lane));
      });
    },
  };
}
