import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { loadConfig } from '../src/config';
import { parseStartupTimings } from '../src/cli/startup-timings';
import { ensureDatabase } from '../src/stack/local-postgres';
import { fmt, stats } from './support';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** How each kind of start is launched: from the TypeScript sources (tsx), or the entry `npm run build:workflows` compiled. */
const ENTRIES = {
  src: ['--import', 'tsx', 'src/cli/worker.ts'],
  built: ['.build/worker.mjs'],
} as const;
type Entry = keyof typeof ENTRIES;

interface Sample {
  /** Process spawned → Temporal lists a poller on the run's own task queue (seen from outside). */
  toPoller: number;
  /** What the worker measured itself (--timings): per phase, total and CPU. */
  phases: Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether Temporal lists a poller on `taskQueue` (its workflow side). */
async function hasPoller(client: Client, namespace: string, taskQueue: string): Promise<boolean> {
  const res = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (res.pollers?.length ?? 0) > 0;
}

/** One start of the worker on a task queue of its own, ended (SIGTERM) once it polls; its schedules are removed. */
async function startOnce(opts: { cwd: string; entry: Entry; env: NodeJS.ProcessEnv; client: Client; namespace: string; taskQueue: string; timeoutMs: number }): Promise<Sample> {
  const started = performance.now();
  const child = spawn(process.execPath, [...ENTRIES[opts.entry], '--timings'], { cwd: opts.cwd, env: { ...opts.env, TEMPORAL_TASK_QUEUE: opts.taskQueue }, stdio: ['ignore', 'pipe', 'pipe'] });
  let phases: Record<string, number> | undefined;
  const scheduleIds: string[] = [];
  let output = '';
  const onLine = (chunk: Buffer) => {
    output += chunk.toString();
    for (const line of chunk.toString().split('\n')) {
      phases ??= parseStartupTimings(line);
      if (line.startsWith('schedules: ')) scheduleIds.push(...line.slice('schedules: '.length).split(', ').map((s) => s.split(' ')[0]!));
    }
  };
  child.stdout.on('data', onLine);
  child.stderr.on('data', onLine);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let toPoller = Number.NaN;
  try {
    while (performance.now() - started < opts.timeoutMs) {
      if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}:\n${output.slice(-2000)}`);
      if (Number.isNaN(toPoller) && (await hasPoller(opts.client, opts.namespace, opts.taskQueue))) toPoller = performance.now() - started;
      // A checkout without --timings (main before this bench) prints no phases: its poller is enough.
      if (!Number.isNaN(toPoller) && (phases || performance.now() - started > toPoller + 20_000)) break;
      await sleep(50);
    }
    if (Number.isNaN(toPoller)) throw new Error(`worker did not poll within ${opts.timeoutMs} ms:\n${output.slice(-2000)}`);
    return { toPoller, phases: phases ?? {} };
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
    for (const id of scheduleIds) await opts.client.schedule.getHandle(id).delete().catch(() => undefined);
  }
}

function report(label: string, samples: Sample[]): void {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.phases)))];
  console.log(`\n${label}: ${samples.length} starts`);
  console.log(`${'phase'.padEnd(22)}${'median'.padStart(12)}${'p95'.padStart(12)}`);
  const row = (name: string, xs: number[]) => {
    const s = stats(xs);
    console.log(`${name.padEnd(22)}${fmt(s.p50).padStart(12)}${fmt(s.p95).padStart(12)}`);
  };
  for (const name of names) row(name, samples.flatMap((s) => (s.phases[name] === undefined ? [] : [s.phases[name]])));
  row('spawn → poller seen', samples.map((s) => s.toPoller));
}

/**
 * `npm run bench:restart -- [--runs N] [--entry src|built|both] [--cwd DIR]`: starts the real
 * worker process N times against the running stack the environment names (TEMPORAL_ADDRESS,
 * DATABASE_URL, CHROMA_URL, EMBEDDINGS_URL), each on its own task queue
 * and in the database `bench_restart`, and prints the median and p95 of every phase of its start
 * (from --timings) and of "spawn → Temporal lists its poller", measured from outside. The first
 * start of each entry is a warm-up (it migrates the database, fills tsx's cache) and is left out.
 * `--cwd` measures another checkout (e.g. an export of main) with this bench. Asserts nothing.
 */
export async function run(args: string[]): Promise<void> {
  const opt = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const runs = Number(opt('runs') ?? 5);
  const cwd = resolve(opt('cwd') ?? ROOT);
  const which = opt('entry') ?? 'both';
  const entries = (which === 'both' ? (['src', 'built'] as const) : ([which] as Entry[])).filter((e) => e === 'src' || existsSync(join(cwd, ENTRIES[e][0])));
  if (entries.length === 0) throw new Error('nothing to start: `npm run build:workflows` writes .build/worker.mjs');
  const config = loadConfig();
  if (!config.postgres.url || !config.temporal.address || !config.chroma.url) throw new Error('set the stack variables first: TEMPORAL_ADDRESS, DATABASE_URL and CHROMA_URL of a running stack (e.g. the one `npm run dev` starts)');
  const db = new URL(config.postgres.url);
  const admin = new URL(db);
  admin.pathname = '/postgres';
  db.pathname = '/bench_restart';
  await ensureDatabase(admin.toString(), 'bench_restart');
  const env = { ...process.env, DATABASE_URL: db.toString(), CHROMA_COLLECTION: 'bench_restart', LOG_LEVEL: 'warn' };
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  try {
    for (const entry of entries) {
      const samples: Sample[] = [];
      for (let i = 0; i <= runs; i++) {
        const sample = await startOnce({ cwd, entry, env, client, namespace: config.temporal.namespace, taskQueue: `bench-restart-${process.pid}-${entry}-${i}`, timeoutMs: 180_000 });
        if (i === 0) console.log(`${entry}: warm-up start ${fmt(sample.toPoller)} to poller`);
        else samples.push(sample);
      }
      report(`${entry} (${ENTRIES[entry].join(' ')})`, samples);
    }
  } finally {
    await connection.close();
  }
}
