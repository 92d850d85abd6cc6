/**
 * A pool of worker threads (piscina) for the rule work of extraction (src/shared/rule-work.ts). Each task has
 * a hard time limit counted from when a thread starts it: a task that overruns is aborted, which
 * terminates its thread (a regular expression cannot be interrupted any other way) and piscina
 * starts a fresh one; the message fails, not the worker process, and the event loop that serves
 * other users never runs the rules at all.
 */
import { MessageChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { RuleWorkError, type MessagePlan, type MessageTask, type RuleTask, type RuleWork, type ScreenResult, type ScreenTask } from '../../shared/rule-work';

export interface RulePoolOptions {
  threads: number;
  /** Time limit of one message's rule work, from when a thread starts it. */
  messageTimeoutMs: number;
  /** Time limit of a page's provenance screen. */
  screenTimeoutMs: number;
  /** The worker entry; tests give one that wraps the real rules (test/fixtures/). */
  filename?: string;
}

export const RULE_WORKER_ENTRY = fileURLToPath(new URL('./rule-worker.mjs', import.meta.url));

export class RulePool implements RuleWork {
  private readonly pool: Piscina;
  /** Tasks that ran out of time since start: the count an operator (and /metrics) reads. */
  timeouts = 0;

  constructor(private readonly options: RulePoolOptions) {
    this.pool = new Piscina({
      filename: options.filename ?? RULE_WORKER_ENTRY,
      minThreads: 0,
      maxThreads: options.threads,
      // An idle pool holds no thread, so a process with nothing to extract keeps no worker alive.
      idleTimeout: 30_000,
      // A thread dies with the task that overran; the next task gets a fresh one.
      concurrentTasksPerWorker: 1,
    });
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  planMessage(task: Omit<MessageTask, 'kind'>): Promise<MessagePlan> {
    return this.run({ kind: 'message', ...task }, this.options.messageTimeoutMs) as Promise<MessagePlan>;
  }

  screen(task: Omit<ScreenTask, 'kind'>): Promise<ScreenResult> {
    return this.run({ kind: 'screen', ...task }, this.options.screenTimeoutMs) as Promise<ScreenResult>;
  }

  private async run(task: RuleTask, limitMs: number): Promise<unknown> {
    const abort = new AbortController();
    const { port1, port2 } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    port1.once('message', () => {
      timer = setTimeout(() => abort.abort(), limitMs);
    });
    // The port must not keep the process alive while the task waits in the queue.
    port1.unref();
    try {
      return await this.pool.run({ task, started: port2 }, { transferList: [port2], signal: abort.signal });
    } catch (err) {
      if (abort.signal.aborted) {
        this.timeouts++;
        throw new RuleWorkError('timeout', `rule work ran out of its ${limitMs} ms`);
      }
      throw new RuleWorkError('error', err instanceof Error ? err.message : String(err));
    } finally {
      clearTimeout(timer);
      port1.close();
    }
  }

  /** Ends every thread; a task still running is abandoned. */
  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
