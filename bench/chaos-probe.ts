import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import pg from 'pg';

/**
 * What bounds the chaos bench's throughput (#22 item 6), measured rather than guessed:
 *   - the embedder: a pass-through proxy in front of it counts requests, texts per request and
 *     the time the (one-request-at-a-time) server spent answering, so its busy share of a window
 *     is known;
 *   - the CPU: user+system seconds of each process tree (API, worker, Temporal, PostgreSQL,
 *     Chroma, embedder) over a window, on a machine whose two cores they all share;
 *   - PostgreSQL: what the apps' active backends wait on, sampled every 200 ms (a `Lock` wait is a
 *     row or advisory lock held by another transaction);
 *   - Temporal: per activity type, time from schedule to start (a worker slot or poll away) and
 *     from start to completion, from the histories of sampled extraction workflows.
 */

// ─── The embedder proxy ──────────────────────────────────────────────────────────────────────────

export interface EmbedderTraffic {
  requests: number;
  texts: number;
  /** Requests by e5 prefix, and how many held one text only. */
  byType: Record<string, { requests: number; texts: number; single: number }>;
  /** Texts (with their e5 prefix) already embedded earlier in the same window. */
  repeated: number;
  /** Sum of the time between a request's arrival and its answer. */
  busyMs: number;
}

export class EmbedderProxy {
  private server?: Server;
  private traffic: EmbedderTraffic = empty();
  private seen = new Set<string>();
  private inFlight = 0;
  private busySince = 0;
  private busyMs = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.count(body);
        // Busy time is wall time with at least one request open: the server computes one at a time.
        if (this.inFlight++ === 0) this.busySince = performance.now();
        const done = () => {
          if (--this.inFlight === 0) this.busyMs += performance.now() - this.busySince;
        };
        const upstream = httpRequest(
          { host: this.target.hostname, port: this.target.port, path: req.url, method: req.method, headers: { ...req.headers, host: this.target.host } },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
            up.on('end', done);
            up.on('error', done);
          },
        );
        upstream.on('error', () => {
          done();
          res.writeHead(502).end();
        });
        upstream.end(body);
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    const port = (this.server.address() as AddressInfo).port;
    return `http://127.0.0.1:${port}${this.target.pathname}`;
  }

  private count(body: Buffer): void {
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { input?: unknown; input_type?: string };
      const inputs = Array.isArray(parsed.input) ? parsed.input.map(String) : [String(parsed.input)];
      const texts = inputs.length;
      const type = parsed.input_type ?? 'none';
      for (const text of inputs) {
        if (this.seen.has(`${type}:${text}`)) this.traffic.repeated++;
        else this.seen.add(`${type}:${text}`);
      }
      this.traffic.requests++;
      this.traffic.texts += texts;
      const t = (this.traffic.byType[type] ??= { requests: 0, texts: 0, single: 0 });
      t.requests++;
      t.texts += texts;
      if (texts === 1) t.single++;
    } catch {
      // not an embeddings call (a health probe): not counted
    }
  }

  /** The traffic since the last call, and resets the counters. */
  take(): EmbedderTraffic {
    const busy = this.busyMs + (this.inFlight > 0 ? performance.now() - this.busySince : 0);
    if (this.inFlight > 0) this.busySince = performance.now();
    const out = { ...this.traffic, busyMs: busy };
    this.traffic = empty();
    this.seen.clear();
    this.busyMs = 0;
    return out;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

function empty(): EmbedderTraffic {
  return { requests: 0, texts: 0, byType: {}, repeated: 0, busyMs: 0 };
}

export function trafficLine(t: EmbedderTraffic, windowMs: number, messages: number): string {
  const types = Object.entries(t.byType)
    .map(([k, v]) => `${k} ${v.requests} req/${v.texts} texts (${v.single} of one text)`)
    .join(', ');
  return `embedder: ${t.requests} requests, ${t.texts} texts (${(t.texts / Math.max(1, t.requests)).toFixed(1)}/request; ${(t.requests / Math.max(1, messages)).toFixed(2)} requests per message; ${t.repeated} texts embedded again): ${types}; busy ${(t.busyMs / 1000).toFixed(1)} s of ${(windowMs / 1000).toFixed(1)} s (${((100 * t.busyMs) / windowMs).toFixed(0)} %)`;
}

// ─── CPU seconds per process tree ────────────────────────────────────────────────────────────────

const TICKS = 100; // USER_HZ on Linux

function procTable(): Map<number, { ppid: number; ticks: number }> {
  const table = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/u.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command (which may hold spaces) start after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), { ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]) });
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

/** CPU seconds (user+system) of each named process and its descendants (`bench`: its own only, the others are its children), now. */
export function cpuSeconds(roots: Record<string, number[]>): Record<string, number> {
  const table = procTable();
  const children = new Map<number, number[]>();
  for (const [pid, p] of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const treeTicks = (pid: number): number => (table.get(pid)?.ticks ?? 0) + (children.get(pid) ?? []).reduce((s, c) => s + treeTicks(c), 0);
  const out: Record<string, number> = {};
  for (const [name, pids] of Object.entries(roots)) out[name] = pids.reduce((s, pid) => s + (name === 'bench' ? (table.get(pid)?.ticks ?? 0) : treeTicks(pid)), 0) / TICKS;
  return out;
}

export function cpuLine(before: Record<string, number>, after: Record<string, number>, windowMs: number, messages?: number): string {
  const parts = Object.keys(after).map((k) => [k, (after[k] ?? 0) - (before[k] ?? 0)] as const);
  const total = parts.reduce((s, [, v]) => s + v, 0);
  // Per message: the figure that does not follow the machine's load (other work only slows the clock).
  const perMessage = messages
    ? `; ms per message: ${parts
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${((1000 * v) / messages).toFixed(0)}`)
        .join(', ')}, total ${((1000 * total) / messages).toFixed(0)}`
    : '';
  return `CPU seconds over ${(windowMs / 1000).toFixed(1)} s (2 cores = ${((2 * windowMs) / 1000).toFixed(0)} s): ${parts
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ')}; total ${total.toFixed(1)} (${((100 * total) / ((2 * windowMs) / 1000)).toFixed(0)} % of both cores)${perMessage}`;
}

/**
 * Temporal's work per message ingested in a phase: history events of every workflow started
 * since `from` (by type, from the visibility store's history lengths), and the activities the
 * extraction runs scheduled. Each event is a write in the server and, for workflow tasks and
 * activities, a round trip to a worker.
 */
export async function temporalWork(temporal: Client, from: Date, messages: number): Promise<string> {
  const byType = new Map<string, { runs: number; events: number }>();
  for await (const wf of temporal.workflow.list({ query: `StartTime > '${from.toISOString()}'` })) {
    const t = byType.get(wf.type) ?? { runs: 0, events: 0 };
    t.runs++;
    t.events += wf.historyLength;
    byType.set(wf.type, t);
  }
  const events = [...byType.values()].reduce((s, t) => s + t.events, 0);
  const per = (n: number) => (n / Math.max(1, messages)).toFixed(2);
  return `Temporal per message: ${per(events)} history events (${[...byType]
    .sort((a, b) => b[1].events - a[1].events)
    .map(([k, t]) => `${k} ${per(t.events)} in ${t.runs} runs`)
    .join(', ')})`;
}

// ─── PostgreSQL waits ────────────────────────────────────────────────────────────────────────────

export class WaitSampler {
  private timer?: NodeJS.Timeout;
  private pool: pg.Pool;
  samples = 0;
  active = 0;
  readonly waits = new Map<string, number>();

  constructor(databaseUrl: string) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  }

  start(): void {
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.pool
        .query<{ w: string | null; n: string }>(
          `SELECT CASE WHEN wait_event_type IS NULL THEN NULL ELSE wait_event_type || ':' || wait_event END AS w, count(*) AS n
             FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1`,
        )
        .then(({ rows }) => {
          this.samples++;
          for (const r of rows) {
            this.active += Number(r.n);
            const key = r.w ?? 'running (no wait)';
            this.waits.set(key, (this.waits.get(key) ?? 0) + Number(r.n));
          }
        })
        .catch(() => {})
        .finally(() => (busy = false));
    }, 200);
  }

  async stop(): Promise<string> {
    clearInterval(this.timer);
    await this.pool.end();
    const top = [...this.waits].sort((a, b) => b[1] - a[1]).slice(0, 6);
    return `PostgreSQL, ${this.samples} samples every 200 ms: ${(this.active / Math.max(1, this.samples)).toFixed(2)} app statements active on average; by wait: ${top.map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`;
  }
}

// ─── Activity times from histories ───────────────────────────────────────────────────────────────

/** Per activity type: count, mean schedule→start and start→close (ms), over up to `limit` extraction workflows since `from`. */
export async function activityTimes(temporal: Client, from: Date, limit = 40): Promise<{ byWorker: string; byType: string; perMessage: string }> {
  const byWorker = new Map<string, number>();
  const byType = new Map<string, { n: number; queueMs: number; runMs: number }>();
  let n = 0;
  let activities = 0;
  let events = 0;
  let messages = 0;
  for await (const wf of temporal.workflow.list({ query: `WorkflowType = 'extractMemoriesWorkflow' AND StartTime > '${from.toISOString()}'` })) {
    if (n++ >= limit) break;
    const handle = temporal.workflow.getHandle(wf.workflowId, wf.runId);
    const history = await handle.fetchHistory();
    // Runs still going are left out of the per-message figures: their messages are not counted yet.
    const result = wf.status.name === 'COMPLETED' ? ((await handle.result()) as { messagesProcessed?: number }) : undefined;
    if (result?.messagesProcessed) {
      messages += result.messagesProcessed;
      events += history.events?.length ?? 0;
      activities += (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length;
    }
    const scheduled = new Map<string, { type: string; at: number }>();
    const started = new Map<string, number>();
    for (const e of history.events ?? []) {
      const id = String(e.eventId);
      const at = e.eventTime ? Number(e.eventTime.seconds) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6) : 0;
      if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
      const s = e.activityTaskStartedEventAttributes;
      if (s) {
        started.set(String(s.scheduledEventId), at);
        if (s.identity) byWorker.set(s.identity.split('@')[0]!, (byWorker.get(s.identity.split('@')[0]!) ?? 0) + 1);
      }
      const c = e.activityTaskCompletedEventAttributes;
      if (c) {
        const sched = scheduled.get(String(c.scheduledEventId));
        const st = started.get(String(c.scheduledEventId));
        if (!sched || st === undefined) continue;
        const t = byType.get(sched.type) ?? { n: 0, queueMs: 0, runMs: 0 };
        t.n++;
        t.queueMs += st - sched.at;
        t.runMs += at - st;
        byType.set(sched.type, t);
      }
    }
  }
  return {
    byWorker: [...byWorker].map(([w, c]) => `${w} ${c}`).join(', ') || 'none sampled',
    byType: [...byType]
      .sort((a, b) => b[1].n * (b[1].queueMs + b[1].runMs) - a[1].n * (a[1].queueMs + a[1].runMs))
      .map(([k, t]) => `${k} ×${t.n} queued ${(t.queueMs / t.n).toFixed(0)} ms + ran ${(t.runMs / t.n).toFixed(0)} ms`)
      .join('; '),
    perMessage: `${messages} messages in the sampled runs that read any: ${(activities / Math.max(1, messages)).toFixed(2)} activities and ${(events / Math.max(1, messages)).toFixed(2)} history events per message`,
  };
}
