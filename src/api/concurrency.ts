import { ErrorCode, MemoryServiceError } from '../core/errors';

/**
 * Counts the long-lived requests (exports, event streams) each caller holds open, so one tenant,
 * user or key cannot take every connection, socket or pooled database client. In-process, like
 * the rate-limit counters: several API processes each allow the full number.
 */
export class ConcurrencyGate {
  private readonly open = new Map<string, number>();

  constructor(private readonly what: string) {}

  /**
   * Takes one slot under every `limits` key, or none: past any limit → 429 `concurrency_limited`
   * naming the scope, with a Retry-After. The release it returns is idempotent.
   */
  acquire(limits: { key: string; scope: string; max: number }[], retryAfterSeconds: number): () => void {
    for (const { key, scope, max } of limits) {
      if ((this.open.get(key) ?? 0) >= max) {
        throw new MemoryServiceError(ErrorCode.concurrencyLimited, `too many ${this.what} open ${scope}: at most ${max} at once; retry in ${retryAfterSeconds} s`, {
          resource: this.what,
          scope,
          limit: max,
          retryAfterSeconds,
        });
      }
    }
    for (const { key } of limits) this.open.set(key, (this.open.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const { key } of limits) {
        const n = (this.open.get(key) ?? 1) - 1;
        if (n <= 0) this.open.delete(key);
        else this.open.set(key, n);
      }
    };
  }

  /** How many slots `key` holds now. */
  count(key: string): number {
    return this.open.get(key) ?? 0;
  }
}

/**
 * A process-wide bound on work that holds a pooled database connection for a while (an export's
 * snapshot read): at most `max` at once, fewer than the pool holds, so the hot path always finds
 * a connection. Excess waits its turn, up to `maxWaitMs`, then is refused (429 `concurrency_limited`).
 */
export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly what: string,
    private readonly max: number,
  ) {}

  async run<T>(work: () => Promise<T>, maxWaitMs: number): Promise<T> {
    if (this.running >= this.max) await this.turn(maxWaitMs);
    else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next in line; `running` stays counted for it.
      if (next) next();
      else this.running--;
    }
  }

  private turn(maxWaitMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        const retryAfterSeconds = Math.max(1, Math.ceil(maxWaitMs / 1000));
        reject(new MemoryServiceError(ErrorCode.concurrencyLimited, `too many ${this.what} at once on this server; retry in ${retryAfterSeconds} s`, { resource: this.what, scope: 'for this server', limit: this.max, retryAfterSeconds }));
      }, maxWaitMs);
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiting.push(go);
    });
  }
}
