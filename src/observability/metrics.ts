/**
 * The service's Prometheus series (docs/operations.md#metrics-and-traces). One registry per process:
 * the API and the worker of `npm run dev` share it, so one scrape of /metrics sees both.
 *
 * Labels hold only closed sets (route names, actions, stores, budgets) — never a user id, user key,
 * tenant id or text: a label's values are kept for the life of the process and shown to whoever
 * scrapes, and an open set would also grow without bound.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const recallRoute = new Histogram({
  name: 'jarvis_recall_route_duration_seconds',
  help: 'Time of one search route of a recall or conversation search, by route and outcome',
  labelNames: ['route', 'outcome'] as const,
  buckets: seconds,
  registers: [registry],
});
const recallRequest = new Histogram({
  name: 'jarvis_recall_duration_seconds',
  help: 'Time of a whole recall, all routes, fusion and budget included',
  buckets: seconds,
  registers: [registry],
});
const contextTokens = new Histogram({
  name: 'jarvis_recall_context_tokens',
  help: 'Tokens of the context a recall returned',
  buckets: [0, 50, 100, 200, 400, 800, 1600, 3200],
  registers: [registry],
});
const extractionRuns = new Counter({ name: 'jarvis_extraction_runs_total', help: 'Extraction passes over a conversation finished (one or more per run), by outcome', labelNames: ['outcome'] as const, registers: [registry] });
const decisions = new Counter({ name: 'jarvis_extraction_decisions_total', help: 'Memory decisions applied, by action (add, update, merge, skip, …)', labelNames: ['action'] as const, registers: [registry] });
const workflowFailures = new Counter({ name: 'jarvis_workflow_failures_total', help: 'Workflows the API saw fail, by kind', labelNames: ['kind'] as const, registers: [registry] });
const rateLimited = new Counter({ name: 'jarvis_rate_limit_rejections_total', help: 'Requests refused with 429, by budget and scope', labelNames: ['budget', 'scope'] as const, registers: [registry] });
const storeCalls = new Histogram({
  name: 'jarvis_store_call_duration_seconds',
  help: 'Calls to PostgreSQL, Chroma and the embedder, by store, operation and outcome',
  labelNames: ['store', 'op', 'outcome'] as const,
  buckets: seconds,
  registers: [registry],
});
const workingSetReads = new Counter({
  name: 'jarvis_recall_working_set_reads_total',
  help: "Recalls by where their lists, BM25 and hydration were read: held (the process's working set, brought up to date), sql (none held), dropped (held, but a deletion or purge made it read through SQL)",
  labelNames: ['outcome'] as const,
  registers: [registry],
});
const embedderCache = new Counter({ name: 'jarvis_embedder_cache_total', help: 'Embedder cache lookups, by result (hit, miss)', labelNames: ['result'] as const, registers: [registry] });

/** The database-backed gauges, read at scrape time (outbox, quarantine). */
export interface GaugeSources {
  outbox(): Promise<{ pending: number; deadLetters: number; oldestPendingSeconds: number | null }>;
  quarantined(): Promise<number>;
}
let sources: GaugeSources | undefined;
/** Set by the API that serves /metrics; without it the gauges stay unset rather than read as zero. */
export function setGaugeSources(s: GaugeSources | undefined): void {
  sources = s;
}
new Gauge({
  name: 'jarvis_outbox_depth',
  help: 'Vector outbox entries, by state (pending, dead)',
  labelNames: ['state'] as const,
  registers: [registry],
  async collect() {
    if (!sources) return;
    const h = await sources.outbox();
    this.set({ state: 'pending' }, h.pending);
    this.set({ state: 'dead' }, h.deadLetters);
  },
});
new Gauge({
  name: 'jarvis_outbox_oldest_pending_seconds',
  help: 'Age of the oldest pending vector outbox entry (0 when none)',
  registers: [registry],
  async collect() {
    if (!sources) return;
    this.set((await sources.outbox()).oldestPendingSeconds ?? 0);
  },
});
new Gauge({
  name: 'jarvis_extraction_quarantined_messages',
  help: 'Messages held out of extraction by the quarantine',
  registers: [registry],
  async collect() {
    if (sources) this.set(await sources.quarantined());
  },
});

/** The hooks the code calls; each one line where the series comes from. */
export const metrics = {
  recallRoute(route: string, ms: number, ok: boolean): void {
    recallRoute.observe({ route, outcome: ok ? 'ok' : 'failed' }, ms / 1000);
  },
  recall(ms: number, tokens: number): void {
    recallRequest.observe(ms / 1000);
    contextTokens.observe(tokens);
  },
  extractionRun(outcome: string): void {
    extractionRuns.inc({ outcome });
  },
  decision(action: string): void {
    decisions.inc({ action });
  },
  workflowFailure(kind: string): void {
    workflowFailures.inc({ kind });
  },
  rateLimited(budget: string, scope: string): void {
    rateLimited.inc({ budget, scope });
  },
  workingSetRead(outcome: 'held' | 'sql' | 'dropped'): void {
    workingSetReads.inc({ outcome });
  },
  embedderCache(hit: boolean): void {
    embedderCache.inc({ result: hit ? 'hit' : 'miss' });
  },
  /** Times `call` as one call to `store` (`postgres`, `chroma`, `embedder`); the result and error pass through. */
  async timed<T>(store: 'postgres' | 'chroma' | 'embedder', op: string, call: () => Promise<T>): Promise<T> {
    const end = storeCalls.startTimer({ store, op });
    try {
      const out = await call();
      end({ outcome: 'ok' });
      return out;
    } catch (err) {
      end({ outcome: 'failed' });
      throw err;
    }
  },
};
