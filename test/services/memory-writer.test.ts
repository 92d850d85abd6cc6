import { describe, expect, it } from 'vitest';
import type { ConflictJudge } from '../../src/core/ports/memory';
import { applyCandidate, applyDecision, loadNeighbours, resolve, toNeighbours } from '../../src/memory/memory-writer';
import { syncVectors } from '../../src/memory/vector-sync';
import { candidate } from '../support/candidate';
import { fakeDeps } from '../support/fakes';

const user = 'tenant-a:USER';
const audit = { actor: 'test', conversationId: 'c1' };

function setup(overrides: Parameters<typeof fakeDeps>[0] = {}) {
  const f = fakeDeps(overrides);
  const apply = (text: string, key: string, over: Parameters<typeof candidate>[1] = {}) => applyCandidate(f.deps, { userId: user, candidate: candidate(text, over), key, audit });
  const actions = () => f.store.state.events.map((e) => e.action);
  return { ...f, apply, actions };
}

describe('applyCandidate', () => {
  it('creates a new memory with its graph links, a keyed decision event and its vector', async () => {
    const { apply, store, vectors, embedder, actions } = setup();
    const r = await apply('I live in Berlin', 'k1', { entities: [{ name: 'Berlin', kind: 'place' }] });
    expect(r).toMatchObject({ action: 'create', replayed: false, affectedIds: [] });
    const row = store.row(r.memoryId!)!;
    expect(row).toMatchObject({ status: 'active', text: 'I live in Berlin', frequencyCount: 1, source: { conversationId: 'c1', via: 'extraction' } });
    expect(store.state.links).toEqual([{ userId: user, memoryId: r.memoryId, entities: [{ name: 'Berlin', kind: 'place' }], relations: [] }]);
    expect(actions()).toEqual(['create']);
    expect(store.state.events[0]).toMatchObject({ idempotencyKey: 'k1', memoryId: r.memoryId, actor: 'test' });
    // The embedding computed for the decision is the one stored: the text is embedded once.
    expect(vectors.byUser.get(user)?.has(r.memoryId!)).toBe(true);
    expect(embedder.calls).toBe(1);
    expect(store.state.outbox.size).toBe(0);
  });

  it('replays a decision recorded under the same key instead of applying it again', async () => {
    const { apply, store, actions } = setup();
    const first = await apply('I live in Berlin', 'k1');
    const again = await apply('I live in Berlin', 'k1');
    expect(again).toMatchObject({ action: 'create', memoryId: first.memoryId, replayed: true });
    expect(store.all(user)).toHaveLength(1);
    expect(actions()).toEqual(['create']);
  });

  it('reinforces a restatement of the same fact', async () => {
    const { apply, store, actions } = setup();
    const first = await apply('I live in Berlin', 'k1');
    const second = await apply('I live in Berlin', 'k2', { saidAt: new Date('2026-06-03T09:00:00Z'), messageIds: ['m2'] });
    expect(second).toMatchObject({ action: 'reinforce', memoryId: first.memoryId, affectedIds: [] });
    expect(store.row(first.memoryId!)).toMatchObject({ frequencyCount: 2, source: { messageIds: ['m1', 'm2'] } });
    expect(actions()).toEqual(['create', 'reinforce', 'reinforce']);
  });

  it('supersedes what an update names, keeping the old wording auditable', async () => {
    const { apply, store, vectors, actions } = setup();
    const old = await apply('I live in Berlin', 'k1');
    const r = await apply('I live in Munich now', 'k2', { intent: 'update', subject: 'live' });
    expect(r).toMatchObject({ action: 'supersede', affectedIds: [old.memoryId] });
    expect(store.row(old.memoryId!)).toMatchObject({ status: 'superseded', supersededBy: r.memoryId });
    expect(store.row(r.memoryId!)).toMatchObject({ status: 'active', supersedes: old.memoryId });
    expect(actions()).toEqual(['create', 'superseded', 'supersede']);
    expect([...vectors.byUser.get(user)!.keys()]).toEqual([r.memoryId]);
  });

  it('expires what a forget request names', async () => {
    const { apply, store, vectors, actions } = setup();
    const old = await apply('I live in Berlin', 'k1');
    const r = await apply('forget where I live', 'k2', { intent: 'forget', subject: 'Berlin' });
    expect(r).toMatchObject({ action: 'forget', affectedIds: [old.memoryId] });
    expect(r.memoryId).toBeUndefined();
    expect(store.row(old.memoryId!)!.status).toBe('expired');
    expect(actions()).toEqual(['create', 'expire', 'forget']);
    expect(vectors.byUser.get(user)!.size).toBe(0);
  });

  it('ignores a low-confidence candidate without embedding it, and still records the decision', async () => {
    const { apply, store, embedder, actions } = setup();
    const r = await apply('maybe I like jazz', 'k1', { confidence: 0.3 });
    expect(r).toMatchObject({ action: 'ignore', affectedIds: [], replayed: false });
    expect(store.all(user)).toEqual([]);
    expect(embedder.calls).toBe(0);
    expect(actions()).toEqual(['ignore']);
  });

  it('restores an archived fact the user states again word for word', async () => {
    const { apply, store, deps, actions } = setup();
    const first = await apply('I live in Berlin', 'k1');
    await deps.unitOfWork.forUser({ userId: user, work: (tx) => tx.memories.setStatus({ userId: user, id: first.memoryId!, status: 'archived', at: new Date('2026-06-02T10:00:00Z') }) });
    const r = await apply('I live in Berlin', 'k2', { saidAt: new Date('2026-06-05T09:00:00Z') });
    expect(r).toMatchObject({ action: 'reinforce', memoryId: first.memoryId });
    expect(store.row(first.memoryId!)).toMatchObject({ status: 'active', frequencyCount: 2 });
    expect(actions()).toEqual(['create', 'restore', 'reinforce', 'reinforce']);
  });

  it('keeps the decision when the vector write fails after commit: the outbox holds it for the next sync', async () => {
    const { apply, store, vectors, deps } = setup();
    vectors.failWrites = true;
    const r = await apply('I live in Berlin', 'k1');
    expect(r.action).toBe('create');
    expect(store.row(r.memoryId!)!.status).toBe('active');
    expect(store.state.outbox.get(r.memoryId!)).toMatchObject({ op: 'upsert', attempts: 1, lastError: 'Chroma unreachable' });
    vectors.failWrites = false;
    expect(await syncVectors(deps, { userId: user })).toEqual({ upserted: 1, removed: 0, failed: 0 });
    expect(store.state.outbox.size).toBe(0);
    expect(vectors.byUser.get(user)?.has(r.memoryId!)).toBe(true);
  });

  it('fails without writing anything when the neighbour search cannot reach the vector index (the activity retries)', async () => {
    const { apply, store, vectors } = setup();
    vectors.down = true;
    await expect(apply('I live in Berlin', 'k1')).rejects.toThrow('Chroma unreachable');
    expect(store.all(user)).toEqual([]);
    expect(store.state.events).toEqual([]);
  });

  it('rolls the whole decision back when a write inside the unit of work fails', async () => {
    const { apply, store } = setup();
    store.onCall = (method) => {
      if (method === 'link') throw new Error('graph write failed');
    };
    await expect(apply('I live in Berlin', 'k1')).rejects.toThrow('graph write failed');
    expect(store.all(user)).toEqual([]);
    expect(store.state.events).toEqual([]);
    expect(store.state.outbox.size).toBe(0);
  });

  it('asks the conflict judge outside the lock, and not again for a replayed key', async () => {
    let asked = 0;
    const judge: ConflictJudge = {
      name: 'fake-llm',
      async propose() {
        asked++;
        return { unusable: 'no JSON' };
      },
    };
    const { apply } = setup({ conflictJudge: judge });
    await apply('I work at Initech as a backend engineer', 'k1');
    const r = await apply('I work at Globex now', 'k2');
    expect(asked).toBe(1);
    expect(r.reason).toContain('fake-llm reply unusable: no JSON');
    await apply('I work at Globex now', 'k2');
    expect(asked).toBe(1);
  });
});

describe('applyCandidate stages', () => {
  it('loadNeighbours finds the same fact, words in common and the nearest vectors of this user only', async () => {
    const { apply, deps } = setup();
    const berlin = await apply('I live in Berlin', 'k1');
    await applyCandidate(deps, { userId: 'tenant-a:OTHER', candidate: candidate('I live in Berlin'), key: 'k1', audit });
    const c = candidate('I live in Berlin');
    const [embedding] = await deps.embedder.embedDocuments({ texts: [c.text] });
    const neighbours = await loadNeighbours(deps, { userId: user, candidate: c, embedding });
    expect(neighbours).toHaveLength(1);
    expect(neighbours[0]).toMatchObject({ memory: { id: berlin.memoryId }, sameNormalizedFact: true, lexicalOverlap: 1 });
    expect(neighbours[0]!.vectorSimilarity).toBeCloseTo(1);
  });

  it('toNeighbours marks memories that mention the subject', () => {
    const memory = (id: string, text: string) => ({ id, text, type: 'fact', scope: 'global', source: {} }) as never;
    const n = toNeighbours(candidate('I am vegetarian now', { intent: 'update', subject: 'meat' }), [memory('a', 'I eat meat every day'), memory('b', 'I like jazz')], new Map([['a', 0.5]]));
    expect(n.map((x) => [x.memory.id, x.mentionsSubject, x.vectorSimilarity])).toEqual([
      ['a', true, 0.5],
      ['b', false, 0],
    ]);
  });

  it('resolve falls back to the rules, saying why, when the judge answer is unusable', () => {
    const decision = resolve(candidate('I like tea'), [], { judge: 'llm', labelled: [], unusable: 'empty' }, 0.93);
    expect(decision.action).toBe('create');
    expect(decision.reason).toMatch(/rules decided/);
  });

  it('applyDecision leaves the memories alone for an ignore', async () => {
    const { store, deps } = setup();
    const ctx = { userId: user, candidate: candidate('x'), key: 'k', audit, eventBase: { userId: user, actor: 'test' } };
    const r = await deps.unitOfWork.forUser({ userId: user, work: (tx) => applyDecision(tx, ctx, { action: 'ignore', reason: 'because' }) });
    expect(r).toEqual({ text: 'x', type: 'fact', messageIds: ['m1'], action: 'ignore', reason: 'because', affectedIds: [], replayed: false });
    expect(store.state.events).toEqual([]);
  });
});
