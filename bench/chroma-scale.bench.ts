import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ChromaClient, Collection } from 'chromadb';
import { chromaClient, forEachLimited } from '../src/adapters/chroma/user-collections';
import { findExecutable } from '../src/stack/binaries';
import { freePort, httpOk } from '../src/stack/managed-process';
import { fmt, stats, timed } from './support';

/**
 * How the Chroma layout scales with users (#22 item 5), on a Chroma server this bench starts
 * itself (temp data dir, `nice -n 19`) so RSS, open files and disk are that server's alone:
 *   per-user: one collection of 20 vectors per user, grown to each size in --sizes; at each size
 *     the create+add time, the first and a warm query of sampled collections, RSS, fds, disk.
 *     Growth stops when RSS passes --rss-cap-gib or fds near the server's limit, or after
 *     --budget-s: the machine is shared, so the report says where it stopped.
 *   per-user + LRU: the same with `segment_manager.hnsw_index_pool_cache_config` bounded to
 *     --cache entries (a config yaml for `chroma run`), which should bound RSS and fds and move
 *     the cost to the first query of an evicted collection.
 *   shards: one collection per shard holding U users × 20 vectors, queried with `where: {user_id}`,
 *     for U in --shard-users; first and warm query, RSS/fds/disk per vector.
 * Random unit vectors; benchmarks assert nothing.
 *
 * Flags: --quick | --sizes=1000,10000,50000 --rss-cap-gib=6 --cache=256 --budget-s=900
 *        --shard-users=50,200,1000 --shards=4 --only=per-user,lru,shards --concurrency=4
 *        --nofile=200000 (run the server under `prlimit` with that open-file limit; needs the
 *        right to raise the hard limit) --sync-threshold=N (collections' hnsw batch_size and
 *        sync_threshold, default Chroma's 100 / 1,000) --add-batch=N (vectors per add, default 20)
 */
const DIM = 384;
const PER_USER = 20;

function flag(args: string[], name: string): string | undefined {
  const hit = args.find((a) => a.startsWith(`--${name}=`));
  return hit?.slice(name.length + 3);
}
const numbers = (s: string) => s.split(',').map(Number).filter((n) => n > 0);

let seed = 7;
function random(): number {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 4294967296 - 0.5;
}
function vector(): number[] {
  const v = Array.from({ length: DIM }, random);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

interface Server {
  pid: number;
  dir: string;
  client: ChromaClient;
  stop(): Promise<void>;
}

/** The server's open-file limit: 4 HNSW files per loaded collection pass a default 20,000 at 5k. */
let nofile: number | undefined;

async function startServer(chromaPath: string, cache?: number): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'chroma-scale-'));
  const port = await freePort();
  const args = ['-n', '19', ...(nofile ? ['prlimit', `--nofile=${nofile}:${nofile}`] : []), chromaPath, 'run'];
  // `chroma run` takes either flags or a config file, not both.
  if (cache === undefined) args.push('--path', join(dir, 'data'), '--host', '127.0.0.1', '--port', String(port));
  else {
    // The Rust frontend's LocalSegmentManagerConfig: a foyer in-memory cache of HNSW indexes
    // counted in entries (default 65,536, i.e. every collection stays loaded).
    const yaml = join(dir, 'chroma.yaml');
    writeFileSync(
      yaml,
      [
        `port: ${port}`,
        'listen_address: "127.0.0.1"',
        `persist_path: "${join(dir, 'data')}"`,
        'segment_manager:',
        '  hnsw_index_pool_cache_config:',
        '    memory:',
        `      capacity: ${cache}`,
        '',
      ].join('\n'),
    );
    args.push(yaml);
  }
  const child: ChildProcess = spawn('nice', args, { stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, ANONYMIZED_TELEMETRY: 'False' } });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (!(await httpOk(`${url}/api/v2/heartbeat`).catch(() => false))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
      throw new Error(`chroma did not start (exit ${child.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  // `nice` (and `prlimit`) exec the chroma script, so the child's pid is the server's.
  const pid = child.pid!;
  return {
    pid,
    dir,
    client: chromaClient(url),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface Usage {
  rssMiB: number;
  fds: number;
  diskMiB: number;
}

function usage(s: Server): Usage {
  const status = readFileSync(`/proc/${s.pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  const fds = readdirSync(`/proc/${s.pid}/fd`).length;
  const du = execFileSync('du', ['-sk', s.dir], { encoding: 'utf8' });
  return { rssMiB: rssKb / 1024, fds, diskMiB: Number(du.split('\t')[0]) / 1024 };
}

function fdLimit(pid: number): number {
  const limits = readFileSync(`/proc/${pid}/limits`, 'utf8');
  return Number(/Max open files\s+(\d+)/.exec(limits)?.[1] ?? 1024);
}

const mib = (x: number) => (x >= 1024 ? `${(x / 1024).toFixed(2)} GiB` : `${x.toFixed(0)} MiB`);
const pq = (xs: number[]) => {
  const s = stats(xs);
  return `p50 ${fmt(s.p50)} p95 ${fmt(s.p95)}`;
};

let collectionConfig: { hnsw: { space: 'cosine'; batch_size?: number; sync_threshold?: number } } = { hnsw: { space: 'cosine' } };

/** Vectors per add: 20 (a backfill) by default; --add-batch=1 writes them one by one, as decisions do. */
let addBatch = PER_USER;

async function addUser(c: Collection, userId: string): Promise<void> {
  for (let from = 0; from < PER_USER; from += addBatch) {
    const n = Math.min(addBatch, PER_USER - from);
    await c.add({
      ids: Array.from({ length: n }, (_, i) => `${userId}-${from + i}`),
      embeddings: Array.from({ length: n }, vector),
      metadatas: Array.from({ length: n }, () => ({ user_id: userId, type: 'fact' })),
    });
  }
}

/** One collection per user, grown through `sizes`; returns the report lines. */
async function perUser(chromaPath: string, sizes: number[], opts: { rssCapMiB: number; budgetMs: number; cache?: number; label: string; concurrency: number }): Promise<string[]> {
  const server = await startServer(chromaPath, opts.cache);
  const lines: string[] = [];
  const limit = fdLimit(server.pid);
  const t0 = Date.now();
  const names: string[] = [];
  let stopped: string | undefined;
  try {
    for (const target of sizes) {
      const createMs: number[] = [];
      const stepStart = performance.now();
      const todo = Array.from({ length: target - names.length }, (_, i) => names.length + i);
      let halted = false;
      // Grow in slices so the caps are checked often; --concurrency in flight like a busy API.
      for (let i = 0; i < todo.length && !halted; i += 100) {
        await forEachLimited(todo.slice(i, i + 100), opts.concurrency, async (n) => {
          const name = `scale_u${String(n).padStart(6, '0')}`;
          const [, ms] = await timed(async () => {
            const c = await server.client.createCollection({ name, embeddingFunction: null, configuration: collectionConfig });
            await addUser(c, `user-${n}`);
          });
          createMs.push(ms);
          names.push(name);
        });
        const u = usage(server);
        // Every 1,000 collections a progress line: whether RSS and open files stay flat between checkpoints.
        if (names.length % 1000 === 0) console.log(`  ${opts.label} ${names.length} collections at ${((Date.now() - t0) / 1000).toFixed(0)} s: RSS ${mib(u.rssMiB)}, fds ${u.fds}, disk ${mib(u.diskMiB)}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
        const freeMiB = Number(execFileSync('df', ['-k', '--output=avail', server.dir], { encoding: 'utf8' }).trim().split('\n').at(-1)) / 1024;
        if (freeMiB < 4096) [halted, stopped] = [true, `free disk ${mib(freeMiB)} under 4 GiB`];
        else if (u.rssMiB > opts.rssCapMiB) [halted, stopped] = [true, `RSS ${mib(u.rssMiB)} passed the cap of ${mib(opts.rssCapMiB)}`];
        else if (u.fds > limit * 0.9) [halted, stopped] = [true, `open files ${u.fds} near the limit ${limit}`];
        else if (Date.now() - t0 > opts.budgetMs) [halted, stopped] = [true, `time budget of ${(opts.budgetMs / 1000).toFixed(0)} s spent`];
      }
      const n = names.length;
      const rate = createMs.length / ((performance.now() - stepStart) / 1000);
      // First query of collections not queried before, spread over those created before the last
      // `cache` (evicted, when the cache is bounded: "cold"), then warm. With a bounded cache a
      // second sample, from the collections created last (still cached), is the "recent" first query.
      const coldEnd = opts.cache !== undefined && n > opts.cache * 2 ? n - opts.cache * 2 : n;
      const spread = (from: number, to: number, k: number) => Array.from({ length: Math.min(k, to - from) }, (_, i) => names[from + Math.floor((i * (to - from)) / Math.min(k, to - from))]!);
      const sample = spread(0, coldEnd, 30);
      const recent = opts.cache !== undefined && coldEnd < n ? spread(n - Math.min(30, Math.floor(opts.cache / 2)), n, 30) : [];
      const first: number[] = [];
      const recentFirst: number[] = [];
      const warm: number[] = [];
      // A failed query is counted, not fatal: with a bounded HNSW cache Chroma 1.4.4 answers some
      // queries of evicted collections with "Nothing found on disk", which is itself the finding.
      const errors = new Map<string, number>();
      const attempt = async (fn: () => Promise<unknown>): Promise<number | undefined> => {
        try {
          return (await timed(fn))[1];
        } catch (e) {
          const m = (e as Error).message.slice(0, 120);
          errors.set(m, (errors.get(m) ?? 0) + 1);
          return undefined;
        }
      };
      for (const name of sample) {
        const [c, getMs] = await timed(() => server.client.getCollection({ name }));
        const qMs = await attempt(() => c.query({ queryEmbeddings: [vector()], nResults: 10, include: ['distances'] }));
        if (qMs !== undefined) first.push(getMs + qMs);
        for (let k = 0; k < 3; k++) {
          const ms = await attempt(() => c.query({ queryEmbeddings: [vector()], nResults: 10, include: ['distances'] }));
          if (ms !== undefined) warm.push(ms);
        }
      }
      for (const name of recent) {
        const [c, getMs] = await timed(() => server.client.getCollection({ name }));
        const qMs = await attempt(() => c.query({ queryEmbeddings: [vector()], nResults: 10, include: ['distances'] }));
        if (qMs !== undefined) recentFirst.push(getMs + qMs);
      }
      const failed = [...errors.values()].reduce((a, b) => a + b, 0);
      const asked = sample.length * 4 + recent.length;
      const u = usage(server);
      const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      lines.push(
        `${opts.label} ${String(n).padStart(6)} collections | load ${load} | create+add ${pq(createMs)} (${rate.toFixed(1)}/s) | first query (get+query) ${pq(first)}${recent.length ? ` | recent first ${pq(recentFirst)}` : ''} | warm ${pq(warm)} | RSS ${mib(u.rssMiB)} (${(u.rssMiB / n).toFixed(2)} MiB/coll) | fds ${u.fds} | disk ${mib(u.diskMiB)} (${((u.diskMiB * 1024) / n).toFixed(0)} KiB/coll)${failed ? ` | ${failed} of ${asked} queries FAILED: ${[...errors.keys()].join('; ')}` : ''}`,
      );
      console.log(lines.at(-1));
      if (stopped) break;
    }
    if (stopped) {
      lines.push(`${opts.label} stopped at ${names.length} collections: ${stopped}; larger sizes are extrapolation`);
      console.log(lines.at(-1));
    }
  } finally {
    await server.stop();
  }
  return lines;
}

/** S shards of U users each, filtered by user_id; one row per U. */
async function shards(chromaPath: string, usersPerShard: number[], shardCount: number): Promise<string[]> {
  const lines: string[] = [];
  for (const users of usersPerShard) {
    const server = await startServer(chromaPath);
    try {
      const cols: Collection[] = [];
      const t0 = performance.now();
      for (let s = 0; s < shardCount; s++) {
        const c = await server.client.createCollection({ name: `scale_shard${s}`, embeddingFunction: null, configuration: collectionConfig });
        cols.push(c);
        // 50 users (1,000 vectors) per add, as a backfill would.
        for (let u0 = 0; u0 < users; u0 += 50) {
          const batch = Array.from({ length: Math.min(50, users - u0) }, (_, i) => `s${s}-user-${u0 + i}`);
          await c.add({
            ids: batch.flatMap((id) => Array.from({ length: PER_USER }, (_, i) => `${id}-${i}`)),
            embeddings: batch.flatMap(() => Array.from({ length: PER_USER }, vector)),
            metadatas: batch.flatMap((id) => Array.from({ length: PER_USER }, () => ({ user_id: id, type: 'fact' }))),
          });
        }
      }
      const loadS = (performance.now() - t0) / 1000;
      const first: number[] = [];
      const warm: number[] = [];
      // The first query per user is the one a request after a restart pays only for the shard's
      // first user; shards are loaded by the time later users ask, so "first" is per shard.
      for (let s = 0; s < shardCount; s++) {
        const c = await server.client.getCollection({ name: `scale_shard${s}` });
        first.push((await timed(() => c.query({ queryEmbeddings: [vector()], nResults: 10, where: { user_id: `s${s}-user-0` }, include: ['distances'] })))[1]);
      }
      for (let i = 0; i < 60; i++) {
        const s = i % shardCount;
        const who = `s${s}-user-${(i * 37) % users}`;
        warm.push((await timed(() => cols[s]!.query({ queryEmbeddings: [vector()], nResults: 10, where: { user_id: who }, include: ['distances'] })))[1]);
      }
      const u = usage(server);
      const vectors = users * PER_USER * shardCount;
      lines.push(
        `shards ${shardCount} × ${String(users).padStart(5)} users (${users * PER_USER} vectors/shard) | loaded in ${loadS.toFixed(1)} s | first query of a shard ${pq(first)} | warm filtered ${pq(warm)} | RSS ${mib(u.rssMiB)} (${((u.rssMiB * 1024) / vectors).toFixed(1)} KiB/vector) | fds ${u.fds} | disk ${mib(u.diskMiB)} (${((u.diskMiB * 1024 * 1024) / vectors / 1024).toFixed(1)} KiB/vector)`,
      );
      console.log(lines.at(-1));
    } finally {
      await server.stop();
    }
  }
  return lines;
}

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const chromaPath = findExecutable('chroma', { stackDir: process.env.STACK_DIR ?? '.stack' });
  if (!chromaPath) throw new Error('chroma missing: run npm run setup');
  const sizes = numbers(flag(args, 'sizes') ?? (quick ? '100,300' : '1000,10000,50000'));
  const rssCapMiB = Number(flag(args, 'rss-cap-gib') ?? 6) * 1024;
  const budgetMs = Number(flag(args, 'budget-s') ?? (quick ? 90 : 900)) * 1000;
  const cache = Number(flag(args, 'cache') ?? (quick ? 32 : 256));
  const shardUsers = numbers(flag(args, 'shard-users') ?? (quick ? '50,200' : '50,200,1000'));
  const shardCount = Number(flag(args, 'shards') ?? (quick ? 2 : 4));
  const only = (flag(args, 'only') ?? 'per-user,lru,shards').split(',');
  const concurrency = Number(flag(args, 'concurrency') ?? 4);
  nofile = flag(args, 'nofile') ? Number(flag(args, 'nofile')) : undefined;
  // Persist each small index at its first add (defaults: batch 100, sync 1,000 vectors), so an
  // evicted index is on disk: the workaround to try for "Nothing found on disk".
  addBatch = Number(flag(args, 'add-batch') ?? PER_USER);
  const sync = flag(args, 'sync-threshold');
  if (sync) collectionConfig = { hnsw: { space: 'cosine', batch_size: Math.min(Number(sync), 100), sync_threshold: Number(sync) } };
  // The CLI's --version prints the bundled Rust frontend's version; the package's is the server's.
  const python = join(dirname(chromaPath), 'python');
  const version = `chromadb ${execFileSync(python, ['-c', 'import chromadb; print(chromadb.__version__)'], { encoding: 'utf8' }).trim()}`;
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const lines: string[] = [`${new Date().toISOString()} commit ${head}, ${version}, load average at start ${load} (shared machine), ${PER_USER} vectors of ${DIM} dims per user in adds of ${addBatch}, hnsw ${JSON.stringify(collectionConfig.hnsw)}`];
  console.log(lines[0]);
  if (only.includes('per-user')) lines.push(...(await perUser(chromaPath, sizes, { rssCapMiB, budgetMs, label: 'per-user       ', concurrency })));
  if (only.includes('lru')) lines.push(...(await perUser(chromaPath, sizes, { rssCapMiB, budgetMs, cache, label: `per-user LRU ${cache}`, concurrency })));
  if (only.includes('shards')) lines.push(...(await shards(chromaPath, shardUsers, shardCount)));
  lines.push(`load average at end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.log('\nChroma layout at scale');
  for (const l of lines) console.log(l);
}
