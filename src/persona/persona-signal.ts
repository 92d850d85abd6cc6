import type { Client } from '@temporalio/client';
import type { LifecycleTransition } from '../core/lifecycle/sweep';
import type { MemoryTransaction, UnitOfWork } from '../core/ports/transaction';
import { memoriesChangedSignal, PersonaWorkflows, personaWorkflowId, type RebuildPersonaWorkflow } from './contract';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';

/** Audit actions that change what a profile may say: a memory made, replaced, retired, brought back or erased. */
const CHANGES = new Set(['create', 'update', 'supersede', 'superseded', 'forget', 'expire', 'restore', 'erase']);

/**
 * The one place every memory change passes: the unit of work. Its transactions are watched for
 * audited changes (a decision's events, an erase, the lifecycle sweep's archive and expiry
 * transitions), and once a transaction that made any has committed, `onChanged` gets the users
 * whose memories changed. Reinforcement and recall bookkeeping do not count. A rolled-back
 * transaction reports nothing.
 */
export function observeMemoryChanges(inner: UnitOfWork, onChanged: (userIds: string[]) => void): UnitOfWork {
  const observed = async <T>(start: (work: (tx: MemoryTransaction) => Promise<T>) => Promise<T>, work: (tx: MemoryTransaction) => Promise<T>): Promise<T> => {
    const changed = new Set<string>();
    const result = await start((tx) => work(watch(tx, changed)));
    if (changed.size > 0) onChanged([...changed]);
    return result;
  };
  return {
    forUser: ({ userId, work }) => observed((w) => inner.forUser({ userId, work: w }), work),
    run: ({ work }) => observed((w) => inner.run({ work: w }), work),
  };
}

/** `target` with some methods replaced; the others keep running on `target` itself. */
function override<T extends object>(target: T, methods: Partial<T>): T {
  return Object.assign(Object.create(target) as T, methods);
}

function watch(tx: MemoryTransaction, changed: Set<string>): MemoryTransaction {
  const transitions = (list: LifecycleTransition[]) => {
    for (const t of list) if (t.action !== 'reinforce') changed.add(t.userId);
    return list;
  };
  return {
    ...tx,
    events: override(tx.events, {
      append: async (input) => {
        const appended = await tx.events.append(input);
        if (CHANGES.has(input.event.action)) changed.add(input.event.userId);
        return appended;
      },
    }),
    erasure: override(tx.erasure, {
      eraseMemory: async (input) => {
        const erased = await tx.erasure.eraseMemory(input);
        if (erased) changed.add(input.userKey);
        return erased;
      },
    }),
    lifecycle: override(tx.lifecycle, {
      sweepDecayPage: async (input) => {
        const page = await tx.lifecycle.sweepDecayPage(input);
        transitions(page.transitions);
        return page;
      },
      archiveOverCapacity: async (input) => transitions(await tx.lifecycle.archiveOverCapacity(input)),
    }),
  };
}

/** Signals sent at once; the rest wait (a sweep can change thousands of users' memories). */
const CONCURRENCY = 4;

/** How long a stop waits for the signals in flight: a Temporal out of reach must not hold it up. */
const CLOSE_GRACE_MS = 2_000;

/** Hands users to their RebuildPersona workflows; `close` stops it before the connections close. */
export interface PersonaRebuildSignaller {
  (userKeys: string[]): void;
  /**
   * Stops: the users still queued are dropped (their profiles wait for the next change, as after a
   * failed signal) and counted, and the signals in flight are awaited for up to `graceMs`, so none
   * of them runs into a closed connection while Temporal answers. A sweep that retired thousands
   * of users' memories just before a stop left thousands queued, each failing with its own
   * warning. `unanswered`: signals still in flight when the grace ended (Temporal out of reach).
   */
  close(graceMs?: number): Promise<{ dropped: number; unanswered: number }>;
}

/**
 * Hands "memories changed" to each user's RebuildPersona workflow (signal-with-start), off the
 * path that changed them: never awaited by it, repeated users coalesced while a signal is queued,
 * failures reported to `onError` (the profile then waits for the next change; recall already
 * leaves out lines whose memories were retired).
 */
export function personaRebuildSignaller(temporal: Client, opts: { taskQueue: string; debounceSeconds: number; onError: (userKey: string, err: unknown) => void }): PersonaRebuildSignaller {
  const queued = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  let closed = false;
  const next = (): void => {
    while (!closed && inFlight.size < CONCURRENCY && queued.size > 0) {
      const userKey = queued.values().next().value as string;
      queued.delete(userKey);
      const sent: Promise<void> = temporal.workflow
        .signalWithStart<RebuildPersonaWorkflow, []>(PersonaWorkflows.rebuild, {
          taskQueue: opts.taskQueue,
          workflowId: personaWorkflowId(userKey),
          args: [{ userKey, debounceSeconds: opts.debounceSeconds }],
          signal: memoriesChangedSignal,
          signalArgs: [],
          typedSearchAttributes: userSearchAttributes(userKey),
          staticSummary: `Persona of ${userKey}: rebuilt after memory changes`,
        })
        .then(
          () => undefined,
          (err: unknown) => opts.onError(userKey, err),
        )
        .finally(() => {
          inFlight.delete(sent);
          next();
        });
      inFlight.add(sent);
    }
  };
  const signal = (userKeys: string[]): void => {
    if (closed) return;
    for (const k of userKeys) queued.add(k);
    next();
  };
  return Object.assign(signal, {
    async close(graceMs = CLOSE_GRACE_MS) {
      closed = true;
      const dropped = queued.size;
      queued.clear();
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      await Promise.race([Promise.all([...inFlight]), graceOver]);
      clearTimeout(timer);
      return { dropped, unanswered: inFlight.size };
    },
  });
}
