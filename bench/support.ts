import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { loadConfig, type AppConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';
import { startStack, type RunningStack } from '../src/stack';

/** Shared benchmark plumbing: a throwaway stack, timing, and percentiles. No assertions here. */

export function percentile(sorted: number[], p: number): number {
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

export const fmt = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(ms < 10 ? 2 : 1)} ms` : '—');

export async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, performance.now() - t0];
}

export interface BenchStack {
  config: AppConfig;
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
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', CHROMA_COLLECTION: `bench_${randomBytes(3).toString('hex')}`, ...overrides });
  const stack = await startStack(config, { ephemeral: true });
  const runtime = await createRuntime(config, stack);
  return {
    config,
    stack,
    runtime,
    async stop() {
      await runtime.close();
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
