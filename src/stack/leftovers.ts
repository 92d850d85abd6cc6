import { readdirSync, readFileSync, readlinkSync, rmSync, existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StackStartError } from './readiness';

/** What /proc says about one process. */
export interface ProcInfo {
  pid: number;
  comm: string;
  cwd?: string;
  args: string[];
}

/** Which leftovers belong to us: the server's process name and the directory only it uses. */
export interface Owner {
  comm: string;
  dir: string;
  /** PostgreSQL backends rewrite their command line but keep the data directory as their cwd. */
  byCwd?: boolean;
}

/** Every process this user may inspect (Linux /proc; elsewhere nothing, and no recovery). */
export function listProcesses(): ProcInfo[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      let cwd: string | undefined;
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // Another user's process: its cwd is not ours to read, and then it cannot be matched by it.
      }
      out.push({ pid, comm, cwd, args });
    } catch {
      // Gone while we looked, or not readable: not a leftover we could stop anyway.
    }
  }
  return out;
}

const within = (path: string, dir: string) => path === dir || path.startsWith(dir + '/');

/**
 * The processes that are leftovers of *our* server: its name, and its data directory as cwd (when
 * `byCwd`) or as an argument (`-D dir`, `--path dir`, `--db-filename dir/x`). A process of the same
 * name on another directory, or anything else that merely sits in ours, is never picked.
 */
export function leftoversOf(procs: ProcInfo[], owner: Owner): ProcInfo[] {
  const dir = resolve(owner.dir);
  return procs.filter((p) => {
    if (p.comm !== owner.comm) return false;
    if (owner.byCwd && p.cwd && resolve(p.cwd) === dir) return true;
    return p.args.slice(1).some((raw) => {
      const value = raw.startsWith('--') && raw.includes('=') ? raw.slice(raw.indexOf('=') + 1) : raw;
      if (!value.includes('/') && value !== '.') return false;
      const abs = isAbsolute(value) ? value : p.cwd ? resolve(p.cwd, value) : undefined;
      return abs !== undefined && within(resolve(abs), dir);
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

/** Sends each its stop signal, waits up to `boundMs`, then SIGKILLs whatever is still there. */
export async function stopProcesses(targets: { pid: number; signal: NodeJS.Signals }[], boundMs: number): Promise<void> {
  for (const t of targets) signal(t.pid, t.signal);
  const deadline = Date.now() + boundMs;
  while (targets.some((t) => alive(t.pid)) && Date.now() < deadline) await sleep(100);
  for (const t of targets) if (alive(t.pid)) signal(t.pid, 'SIGKILL');
  const hard = Date.now() + 5_000;
  while (targets.some((t) => alive(t.pid)) && Date.now() < hard) await sleep(100);
}

/** The pid in a postmaster.pid file, if the file is there and says one. */
function postmasterPid(pgDataDir: string): number | undefined {
  const file = join(pgDataDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Before a fixed-port start (`npm run dev`): whatever a killed earlier run left behind on *our*
 * data directories is stopped — a live postmaster gets SIGINT (fast shutdown), its orphaned
 * backends SIGTERM, Temporal and Chroma SIGTERM, each SIGKILL after `boundMs` — and a stale
 * postmaster.pid is removed, so the start needs no hand work. Only the servers named in `owners`.
 */
export async function recoverLeftovers(
  owners: { postgres?: string; temporal?: string; chroma?: string },
  log: (line: string) => void,
  boundMs = 10_000,
): Promise<void> {
  const procs = listProcesses();
  const targets: { pid: number; signal: NodeJS.Signals; what: string }[] = [];
  if (owners.postgres) {
    const postmaster = postmasterPid(owners.postgres);
    for (const p of leftoversOf(procs, { comm: 'postgres', dir: owners.postgres, byCwd: true })) {
      const isPostmaster = p.pid === postmaster || p.args.includes('-D');
      targets.push({ pid: p.pid, signal: isPostmaster ? 'SIGINT' : 'SIGTERM', what: isPostmaster ? 'PostgreSQL' : 'a PostgreSQL backend' });
    }
  }
  if (owners.temporal) for (const p of leftoversOf(procs, { comm: 'temporal', dir: owners.temporal })) targets.push({ pid: p.pid, signal: 'SIGTERM', what: 'Temporal' });
  if (owners.chroma) for (const p of leftoversOf(procs, { comm: 'chroma', dir: owners.chroma })) targets.push({ pid: p.pid, signal: 'SIGTERM', what: 'Chroma' });

  if (targets.length) {
    log(`stopping what an earlier run left behind: ${targets.map((t) => `${t.what} (pid ${t.pid})`).join(', ')}`);
    await stopProcesses(targets, boundMs);
    const left = targets.filter((t) => alive(t.pid));
    if (left.length)
      throw new StackStartError(`could not stop ${left.map((t) => `${t.what} (pid ${t.pid})`).join(', ')} left by an earlier run: stop it by hand`, left[0]!.what);
  }
  if (owners.postgres) {
    const pid = postmasterPid(owners.postgres);
    // Every postgres of our data directory is gone now, so whatever that pid is, the file is stale.
    if (pid !== undefined) {
      log(`removing the stale ${join(owners.postgres, 'postmaster.pid')} (pid ${pid} ${alive(pid) ? 'is not our PostgreSQL' : 'is gone'})`);
      rmSync(join(owners.postgres, 'postmaster.pid'), { force: true });
    }
  }
}
