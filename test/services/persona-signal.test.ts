import { describe, expect, it } from 'vitest';
import type { MemoryTransaction, UnitOfWork } from '../../src/core/ports/transaction';
import type { Client } from '@temporalio/client';
import { observeMemoryChanges, personaRebuildSignaller } from '../../src/persona/persona-signal';

/** A unit of work whose transaction records what its repositories were asked. */
function fakeUnitOfWork(): UnitOfWork {
  const tx = {
    events: {
      append: async () => true,
      findByKey: async () => undefined,
      history: async () => [],
    },
    erasure: {
      eraseMemory: async ({ id }: { id: string }) => (id === 'missing' ? undefined : { counts: {}, conversations: [] }),
      vectorErased: async () => {},
    },
    lifecycle: {
      sweepDecayPage: async () => ({ scanned: 2, lastId: 'b', updated: 2, transitions: [{ memoryId: 'a', userId: 'u-swept', action: 'archive', reason: 'faded' }] }),
      archiveOverCapacity: async () => [{ memoryId: 'c', userId: 'u-full', action: 'archive', reason: 'over capacity' }],
      applyReinforcement: async () => [{ memoryId: 'd', userId: 'u-reinforced', action: 'reinforce', reason: 'weekly' }],
    },
  } as unknown as MemoryTransaction;
  return { forUser: ({ work }) => work(tx), run: ({ work }) => work(tx) };
}

const event = (userId: string, action: string) => ({ event: { userId, memoryId: 'm', action, reason: '', actor: 'test' } });

describe('observeMemoryChanges', () => {
  it('reports the users whose memories a committed transaction changed, once per transaction', async () => {
    const seen: string[][] = [];
    const uow = observeMemoryChanges(fakeUnitOfWork(), (ids) => seen.push(ids.sort()));
    await uow.forUser({
      userId: 'u1',
      work: async (tx) => {
        await tx.events.append(event('u1', 'create'));
        await tx.events.append(event('u1', 'superseded'));
        expect(await tx.events.history({ userId: 'u1', memoryId: 'm' })).toEqual([]);
      },
    });
    await uow.forUser({ userId: 'u2', work: (tx) => tx.erasure.eraseMemory({ userKey: 'u2', id: 'x', at: new Date(), actor: 'api' }) });
    await uow.run({
      work: async (tx) => {
        await tx.lifecycle.sweepDecayPage({ now: new Date(), afterId: null, limit: 10, audit: { actor: 'sweep' } });
        await tx.lifecycle.archiveOverCapacity({ userIds: ['u-full'], cap: 1, now: new Date(), audit: { actor: 'sweep' } });
        await tx.lifecycle.applyReinforcement({ now: new Date(), updates: [], audit: { actor: 'sweep' }, reason: 'weekly' });
      },
    });
    expect(seen).toEqual([['u1'], ['u2'], ['u-full', 'u-swept']]);
  });

  it('ignores reinforcement, recall bookkeeping, an unknown erase and rolled-back transactions', async () => {
    const seen: string[][] = [];
    const uow = observeMemoryChanges(fakeUnitOfWork(), (ids) => seen.push(ids));
    await uow.forUser({ userId: 'u1', work: (tx) => tx.events.append(event('u1', 'reinforce')) });
    await uow.forUser({ userId: 'u1', work: (tx) => tx.events.append(event('u1', 'recall_reinforce')) });
    await uow.forUser({ userId: 'u1', work: (tx) => tx.erasure.eraseMemory({ userKey: 'u1', id: 'missing', at: new Date(), actor: 'api' }) });
    await expect(
      uow.forUser({
        userId: 'u1',
        work: async (tx) => {
          await tx.events.append(event('u1', 'create'));
          throw new Error('rolled back');
        },
      }),
    ).rejects.toThrow('rolled back');
    expect(seen).toEqual([]);
  });
});

describe('personaRebuildSignaller', () => {
  /** A Temporal client whose signals stay open until the test answers them. */
  function pendingTemporal() {
    const sent: { userKey: string; answer: () => void }[] = [];
    const temporal = {
      workflow: {
        signalWithStart: (_type: string, o: { args: [{ userKey: string }] }) =>
          new Promise<void>((resolve) => sent.push({ userKey: o.args[0].userKey, answer: resolve })),
      },
    } as unknown as Client;
    return { temporal, sent };
  }

  it('sends four at a time and coalesces a user queued twice', async () => {
    const { temporal, sent } = pendingTemporal();
    const signal = personaRebuildSignaller(temporal, { taskQueue: 'q', debounceSeconds: 1, onError: () => {} });
    signal(['a', 'b', 'c', 'd', 'e', 'f']);
    signal(['f', 'e']);
    expect(sent.map((s) => s.userKey)).toEqual(['a', 'b', 'c', 'd']);
    sent[0]!.answer();
    sent[1]!.answer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((s) => s.userKey)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('on close drops what is queued, counts it, and waits for the signals in flight', async () => {
    const { temporal, sent } = pendingTemporal();
    const errors: string[] = [];
    const signal = personaRebuildSignaller(temporal, { taskQueue: 'q', debounceSeconds: 1, onError: (userKey) => errors.push(userKey) });
    signal(Array.from({ length: 10 }, (_, i) => `u${i}`));
    let closed: { dropped: number } | undefined;
    const closing = signal.close().then((r) => (closed = r));
    await new Promise((resolve) => setImmediate(resolve));
    // Still waiting for the four in flight; none of the six dropped was sent.
    expect(closed).toBeUndefined();
    for (const s of sent) s.answer();
    await closing;
    expect(closed).toEqual({ dropped: 6, unanswered: 0 });
    expect(sent).toHaveLength(4);
    signal(['late']);
    expect(sent).toHaveLength(4);
    expect(errors).toEqual([]);
  });

  it('does not wait past its grace for a Temporal that never answers', async () => {
    const { temporal, sent } = pendingTemporal();
    const signal = personaRebuildSignaller(temporal, { taskQueue: 'q', debounceSeconds: 1, onError: () => {} });
    signal(['a', 'b']);
    expect(await signal.close(20)).toEqual({ dropped: 0, unanswered: 2 });
    expect(sent).toHaveLength(2);
  });
});
