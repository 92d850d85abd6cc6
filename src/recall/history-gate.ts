/**
 * Routes over a store the user has nothing in cannot find anything: message BM25 and the exchange
 * vectors (every hit is shown from a message row), the episode routes, the graph seeds. A user with
 * no messages, episodes or entities paid for them on every recall all the same: three statements
 * and two Chroma look-ups of collections that do not exist, beside the routes that can answer, on
 * the same two cores (issue #22). The short lists' statement says which stores hold anything (three
 * index probes); a route over an empty store waits for that answer and does not run. Once a store
 * is seen to hold something, this process runs its routes at once for that user from then on, as
 * before: the wait is only ever paid by a user with an empty store, or once per process.
 * The answers are the same either way: a skipped route is one that would have found nothing.
 */
import type { MemoryLists, UserHistory } from '../core/recall/memory-lists';

export type HistoryStore = keyof UserHistory;

/** Users whose stores were seen to hold something, per process; at most this many (oldest forgotten). */
const KNOWN_LIMIT = 50_000;
const known = new Map<string, Set<HistoryStore>>();

function remember(userId: string, store: HistoryStore): void {
  const stores = known.get(userId) ?? new Set<HistoryStore>();
  stores.add(store);
  known.delete(userId);
  known.set(userId, stores);
  if (known.size > KNOWN_LIMIT) known.delete(known.keys().next().value!);
}

/**
 * Whether a route over `store` should run for this request: at once when the store was seen to
 * hold something; otherwise once the short lists answer, true when they say it holds something,
 * could not say, or failed (the route then runs as it always did).
 */
export function historyGate(userId: string, lists: Promise<MemoryLists> | undefined): (store: HistoryStore) => Promise<boolean> {
  return (store) => {
    if (!lists || known.get(userId)?.has(store)) return Promise.resolve(true);
    return lists.then(
      (l) => {
        const holds = l.history?.[store] ?? true;
        if (l.history?.[store]) remember(userId, store);
        return holds;
      },
      () => true,
    );
  };
}

/** `run` when the gate opens, else `empty` (what the route answers over an empty store). */
export async function gated<T>(open: Promise<boolean>, run: () => Promise<T>, empty: T): Promise<T> {
  return (await open) ? run() : empty;
}

/** For tests: forget what this process has seen. */
export function forgetHistory(): void {
  known.clear();
}
