import { performance } from 'node:perf_hooks';

/**
 * Where a process's start goes, for `--timings` (bench/worker-restart.bench.ts reads the line).
 * The entry points and the runtime leave `performance` marks named `startup:<phase>`; their times
 * count from the process's own start, so node and the TypeScript loader are in the first phase.
 */
export const TIMINGS_PREFIX = 'startup timings: ';

export function markStartup(phase: string): void {
  performance.mark(`startup:${phase}`);
}

/** Each phase's duration (ms) from the previous mark, in the order they happened. */
export function phaseDurations(marks: readonly { name: string; startTime: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  let previous = 0;
  for (const mark of [...marks].sort((a, b) => a.startTime - b.startTime)) {
    if (!mark.name.startsWith('startup:')) continue;
    out[mark.name.slice('startup:'.length)] = Math.round(mark.startTime - previous);
    previous = mark.startTime;
  }
  return out;
}

/**
 * The line `--timings` prints once the process serves: phase → ms, the total up to the `polling`
 * mark (the start), and the CPU time spent so far (what a shared machine's load does not inflate).
 */
export function startupTimingsLine(): string {
  const marks = performance.getEntriesByType('mark');
  const cpu = process.cpuUsage();
  const total = marks.find((m) => m.name === 'startup:polling')?.startTime ?? performance.now();
  return `${TIMINGS_PREFIX}${JSON.stringify({ ...phaseDurations(marks), total: Math.round(total), cpu: Math.round((cpu.user + cpu.system) / 1000) })}`;
}

/** Parses a line printed by {@link startupTimingsLine}; undefined for any other line. */
export function parseStartupTimings(line: string): Record<string, number> | undefined {
  const at = line.indexOf(TIMINGS_PREFIX);
  if (at < 0) return undefined;
  try {
    const parsed = JSON.parse(line.slice(at + TIMINGS_PREFIX.length)) as unknown;
    if (!parsed || typeof parsed !== 'object') return undefined;
    const entries = Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number');
    return Object.fromEntries(entries);
  } catch {
    return undefined;
  }
}
