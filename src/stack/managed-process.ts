import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A child process the stack started and must stop again. */
export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** The signal that asks it to stop: SIGTERM, or the server's own fast-shutdown signal. */
  stopSignal: NodeJS.Signals;
  stop(): Promise<void>;
}

const running = new Set<ManagedProcess>();
let exitHooksInstalled = false;

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  // A crashed or interrupted parent must not leave servers behind holding ports and data dirs.
  process.once('exit', () => {
    for (const p of running) p.child.kill(p.stopSignal);
  });
  // Signals are the entry points' business (graceful shutdown); `exit` still covers every path.
}

/** Starts `command` with its output in `logFile`; the process is stopped when the parent exits. */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  logFile: string,
  options: SpawnOptions & { stopSignal?: NodeJS.Signals } = {},
): ManagedProcess {
  installExitHooks();
  mkdirSync(dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: 'a' });
  const { stopSignal = 'SIGTERM', ...spawnOptions } = options;
  const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const managed: ManagedProcess = {
    name,
    child,
    logFile,
    stopSignal,
    async stop() {
      running.delete(managed);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(stopSignal);
      const stopped = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
      if (!stopped) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
  running.add(managed);
  return managed;
}

/** Stops every process this module started, newest first. */
export async function stopAll(): Promise<void> {
  const all = [...running].reverse();
  for (const p of all) await p.stop();
}

/** Asks the OS for a free TCP port on loopback (tests use this to avoid clashing with a dev stack). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not allocate a port'));
      });
    });
  });
}

/**
 * Polls `probe` until it resolves true, failing with the tail of the process log when the process
 * dies or the deadline passes, so a broken start says why instead of timing out silently.
 */
export async function waitUntilReady(
  proc: ManagedProcess | undefined,
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc && proc.child.exitCode !== null) {
      throw new Error(`${what} exited with code ${proc.child.exitCode}; see ${proc.logFile}`);
    }
    try {
      if (await probe()) return;
    } catch {
      // Not up yet: connection refused is the expected answer while the server boots.
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} was not ready after ${timeoutMs} ms${proc ? `; see ${proc.logFile}` : ''}`);
    }
    await sleep(200);
  }
}

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return res.ok;
}
