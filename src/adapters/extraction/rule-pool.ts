/**
 * A pool of worker threads (piscina) for the rule work of extraction and the segmentation of
 * appended messages (src/shared/rule-work.ts). Each task has a hard time limit counted from when a
 * thread starts it: a task that overruns is aborted, which terminates its thread (a regular
 * expression cannot be interrupted any other way) and piscina starts a fresh one; the message or
 * the batch fails, not the process, and the event loop that serves other users never runs the
 * rules or the segmenter at all.
 */
import { MessageChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { MessagePostings } from '../../core/ports/conversation';
import { RuleWorkError, runRuleTask, type IndexTask, type MessagePlan, type MessageTask, type RuleTask, type RuleWork, type ScreenResult, type ScreenTask } from '../../shared/rule-work';

/**
 * A batch's texts go to the threads in tasks of about this many characters (a longer message is a
 * task of its own). The largest batch (1,000 messages of MAX_MESSAGE_CHARS) is tens of tasks, so
 * both threads share it, an extraction waiting for a thread waits for one task, not the batch, and
 * the main thread copies texts and postings across in pieces of a few milliseconds.
 */
export const INDEX_TASK_MAX_CHARS = 128_000;

/**
 * The time limit of one index task. A task of {@link INDEX_TASK_MAX_CHARS} characters of junk
 * (random Chinese characters, the slowest text we found for jieba) segments in about 0.1 s on one
 * core: only a text the segmenter chokes on, or a machine starved of CPU, gets near 10 s.
 */
export const INDEX_TASK_TIMEOUT_MS = 10_000;

/**
 * A batch of at most this many characters in all is segmented on the calling thread: a chat
 * turn's few messages take a millisecond or two there, less than the hand-off to a thread, and an
 * idle pool holds no thread at all, so the first append after a quiet spell would otherwise wait
 * about a second for one to start and load the dictionary. Bigger batches, where one user's text
 * could hold the event loop for long, always go to the threads.
 */
export const INLINE_INDEX_MAX_CHARS = 4_000;

export interface RulePoolOptions {
  threads: number;
  /** Time limit of one message's rule work, from when a thread starts it. */
  messageTimeoutMs: number;
  /** Time limit of a page's provenance screen. */
  screenTimeoutMs: number;
  /** Time limit of one task of a batch's segmentation ({@link INDEX_TASK_TIMEOUT_MS} unless given; tests give a short one). */
  indexTimeoutMs?: number;
  /** Batches up to this many characters are segmented on the calling thread ({@link INLINE_INDEX_MAX_CHARS} unless given; 0 sends every batch to the threads). */
  inlineIndexMaxChars?: number;
  /** The worker entry; tests give one that wraps the real rules (test/fixtures/). */
  filename?: string;
}

export const RULE_WORKER_ENTRY = fileURLToPath(new URL('./rule-worker.mjs', import.meta.url));

/** The batch's texts cut into tasks of about {@link INDEX_TASK_MAX_CHARS} characters, in order. */
function indexTasks(texts: readonly string[]): string[][] {
  const tasks: string[][] = [];
  let current: string[] = [];
  let chars = 0;
  for (const text of texts) {
    if (current.length > 0 && chars + text.length > INDEX_TASK_MAX_CHARS) {
      tasks.push(current);
      current = [];
      chars = 0;
    }
    current.push(text);
    chars += text.length;
  }
  if (current.length > 0) tasks.push(current);
  return tasks;
}

export class RulePool implements RuleWork {
  private readonly pool: Piscina;
  /** Tasks that ran out of time since start: the count an operator (and /metrics) reads. */
  timeouts = 0;
  /** Tasks of each kind the threads finished since start (the tests read where work ran). */
  readonly completed: Record<RuleTask['kind'], number> = { message: 0, screen: 0, index: 0 };

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

  /**
   * The batch's postings, its texts segmented in tasks of about {@link INDEX_TASK_MAX_CHARS}
   * characters, each with its own time limit. When one task fails the others are cancelled: the
   * batch is refused whole, and its remaining work would only hold threads other users wait for.
   */
  async indexPostings(task: Omit<IndexTask, 'kind'>): Promise<MessagePostings[]> {
    let chars = 0;
    for (const text of task.texts) chars += text.length;
    if (chars <= (this.options.inlineIndexMaxChars ?? INLINE_INDEX_MAX_CHARS)) return runRuleTask({ kind: 'index', texts: task.texts });
    const limitMs = this.options.indexTimeoutMs ?? INDEX_TASK_TIMEOUT_MS;
    const tasks = indexTasks(task.texts).map((texts) => ({ texts, abort: new AbortController() }));
    const parts = await Promise.all(
      tasks.map(async ({ texts, abort }) => {
        try {
          return (await this.run({ kind: 'index', texts }, limitMs, abort)) as MessagePostings[];
        } catch (err) {
          for (const other of tasks) other.abort.abort();
          throw err;
        }
      }),
    );
    return parts.flat();
  }

  /** `abort`: the caller's, to cancel the task from outside (a queued task is dropped, a running one's thread ended). */
  private async run(task: RuleTask, limitMs: number, abort = new AbortController()): Promise<unknown> {
    const { port1, port2 } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    port1.once('message', () => {
      timer = setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, limitMs);
    });
    // The port must not keep the process alive while the task waits in the queue.
    port1.unref();
    try {
      if (abort.signal.aborted) throw new RuleWorkError('error', 'cancelled: another task of the same work failed');
      const result = await this.pool.run({ task, started: port2 }, { transferList: [port2], signal: abort.signal });
      this.completed[task.kind]++;
      return result;
    } catch (err) {
      if (err instanceof RuleWorkError) throw err;
      if (timedOut) {
        this.timeouts++;
        throw new RuleWorkError('timeout', `rule work ran out of its ${limitMs} ms`);
      }
      if (abort.signal.aborted) throw new RuleWorkError('error', 'cancelled: another task of the same work failed');
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
