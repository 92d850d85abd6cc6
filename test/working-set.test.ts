import { describe, expect, it } from 'vitest';
import { BM25_B, BM25_K1, bm25AvgDocLength, bm25Document, bm25Idf } from '../src/core/recall/bm25';
import { termFrequencies } from '../src/core/text/tokenize';
import type { Memory, MemoryType } from '../src/core/types';
import { MemoryWorkingSet, type WorkingSetChanges, type WorkingSetMark, type WorkingSetRow } from '../src/core/recall/working-set';
import { WorkingSetCache, type WorkingSetSource } from '../src/recall/working-set-cache';
import { mulberry32 } from './support/prng';
import { newMemory } from './support/seed';

const NOW = new Date('2026-12-03T12:00:00Z');
let counter = 0;

function memory(over: Partial<Memory> & { text: string }): Memory {
  counter++;
  const at = new Date(NOW.getTime() - counter * 60_000);
  const { tokens: _tokens, normalizedText: _normalized, importanceComponents: _components, ...m } = newMemory({ id: `00000000-0000-0000-0000-${String(counter).padStart(12, '0')}`, userId: 'u', text: over.text, at });
  return { ...m, ...over };
}

function row(m: Memory, version: bigint): WorkingSetRow {
  const tokens = m.text.split(' ');
  const tf = termFrequencies(tokens);
  return { memory: m, version, postings: { terms: [...tf.keys()], tfs: [...tf.values()], docLength: tokens.length } };
}

describe('MemoryWorkingSet', () => {
  it('scores BM25 as the pure scorer does over the same active memories, and forgets a retired one', () => {
    const set = new MemoryWorkingSet();
    const texts = ['likes green tea', 'allergic to peanuts and tree nuts', 'green car', 'tea tea tea in the morning', 'runs in the morning'];
    const memories = texts.map((text) => memory({ text }));
    memories.forEach((m, i) => set.apply(m, row(m, BigInt(i + 1)).postings));
    const query = ['green', 'tea', 'morning', 'absent'];
    const total = texts.reduce((n, t) => n + t.split(' ').length, 0);
    const df = new Map<string, number>();
    for (const t of texts) for (const term of new Set(t.split(' '))) df.set(term, (df.get(term) ?? 0) + 1);
    const stats = { docCount: texts.length, avgDocLength: bm25AvgDocLength(total, texts.length), docFrequency: df };
    const expected = memories
      .map((m) => ({ id: m.id, score: bm25Document(query, termFrequencies(m.text.split(' ')), m.text.split(' ').length, stats) }))
      .filter((h) => h.score > 0)
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
    const hits = set.bm25(query, 10);
    expect(hits.map((h) => h.id)).toEqual(expected.map((h) => h.id));
    hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 10));

    set.apply({ ...memories[0]!, status: 'archived' }, undefined);
    expect(set.size).toBe(4);
    expect(set.bm25(['green'], 10).map((h) => h.id)).toEqual([memories[2]!.id]);
  });

  it('orders the lists as the SQL functions do: importance then last update, recency then importance, live and settled filters', () => {
    const set = new MemoryWorkingSet();
    const high = memory({ text: 'a', importance: 0.9 });
    const highOlder = memory({ text: 'b', importance: 0.9 });
    const expired = memory({ text: 'c', importance: 0.95, expiresAt: new Date(NOW.getTime() - 1) });
    const pending = memory({ text: 'd', importance: 0.8, pending: true, type: 'preference' });
    const low = memory({ text: 'e', importance: 0.1, type: 'preference' });
    const instruction = memory({ text: 'f', importance: 0.7, type: 'instruction' });
    const taskInstruction = memory({ text: 'g', importance: 0.99, type: 'instruction', scope: 'task' });
    for (const m of [high, highOlder, expired, pending, low, instruction, taskInstruction]) set.apply(m, undefined);
    const types: MemoryType[] = ['fact', 'preference'];
    expect(set.topByImportance({ types, minImportance: 0.5, now: NOW, settledOnly: false, k: 5 }).map((m) => m.text)).toEqual(['a', 'b', 'd']);
    expect(set.topByImportance({ types, minImportance: -Infinity, now: NOW, settledOnly: true, k: 2 }).map((m) => m.text)).toEqual(['a', 'b']);
    expect(set.topByImportance({ types: ['preference'], minImportance: -Infinity, now: NOW, settledOnly: true, k: 5 }).map((m) => m.text)).toEqual(['e']);
    // The recent route keeps expired ones, as recall_recent reads them.
    expect(set.recent({ types: null, k: 3 }).map((m) => m.text)).toEqual(['a', 'b', 'c']);
    expect(set.instructions({ now: NOW, k: 5 }).map((m) => m.text)).toEqual(['f']);
    expect(set.getActive([high.id, expired.id, 'missing'], NOW).map((m) => m.text)).toEqual(['a']);
  });

  it('keeps its orders when a memory is updated, retired or comes back', () => {
    const set = new MemoryWorkingSet();
    const a = memory({ text: 'a', importance: 0.9 });
    const b = memory({ text: 'b', importance: 0.8 });
    const c = memory({ text: 'c', importance: 0.7 });
    for (const m of [a, b, c]) set.apply(m, undefined);
    const top = () => set.topByImportance({ types: ['fact'], minImportance: 0, now: NOW, settledOnly: false, k: 3 }).map((m) => m.text);
    expect(top()).toEqual(['a', 'b', 'c']);
    set.apply({ ...c, importance: 0.95 }, undefined);
    expect(top()).toEqual(['c', 'a', 'b']);
    set.apply({ ...a, status: 'superseded' }, undefined);
    expect(top()).toEqual(['c', 'b']);
    set.apply({ ...b, updatedAt: new Date(NOW.getTime() + 1000), type: 'preference' }, undefined);
    expect(top()).toEqual(['c']);
    expect(set.recent({ types: null, k: 5 }).map((m) => m.text)).toEqual(['b', 'c']);
    expect(set.recent({ types: ['fact'], k: 5 }).map((m) => m.text)).toEqual(['c']);
    set.apply(a, undefined);
    expect(top()).toEqual(['c', 'a']);
    expect(set.size).toBe(3);
  });

  it('loaded at once, it holds the same orders as built one row at a time', () => {
    const rows = Array.from({ length: 200 }, (_, i) =>
      memory({ text: `m${i} ${i % 3 === 0 ? 'tea' : 'coffee'}`, importance: ((i * 37) % 100) / 100, type: (['fact', 'preference', 'goal'] as const)[i % 3], updatedAt: new Date(NOW.getTime() - ((i * 53) % 200) * 1000) }),
    );
    const one = new MemoryWorkingSet();
    for (const m of rows) one.apply(m, row(m, 1n).postings);
    const all = MemoryWorkingSet.of(rows.map((m) => ({ memory: m, postings: row(m, 1n).postings })));
    const lists = (set: MemoryWorkingSet) => ({
      top: set.topByImportance({ types: ['fact', 'goal'], minImportance: 0.3, now: NOW, settledOnly: false, k: 10 }).map((m) => m.id),
      recent: set.recent({ types: null, k: 10 }).map((m) => m.id),
      bm25: set.bm25(['tea', 'm7'], 10),
    });
    expect(lists(all)).toEqual(lists(one));
    expect(all.size).toBe(200);
  });

  it('keeps every score and tie of BM25 exact through thousands of additions, updates and removals', () => {
    // Few words, short texts: most scores tie, so the order of ties is tested as much as the sums.
    const rand = mulberry32(22);
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`);
    const pick = () => words[Math.floor(rand() * rand() * words.length)]!;
    // Ids alike in their first characters and unlike, some a prefix of another, non-ASCII too:
    // ties are broken by id, first through its leading code units, then by the whole string.
    const newId = (step: number): string => {
      const r = rand();
      if (r < 0.4) return `00000000-0000-0000-0001-${String(step).padStart(12, '0')}`;
      if (r < 0.8) return `${Math.floor(rand() * 4096).toString(16).padStart(3, '0')}${step}`;
      return ['', 'a', 'ab', 'é', '\uffff', 'a\uffff'][Math.floor(rand() * 6)]! + String.fromCharCode(97 + Math.floor(rand() * 3)).repeat(Math.floor(rand() * 3));
    };
    const set = new MemoryWorkingSet();
    const model = new Map<string, { tf: Map<string, number>; length: number }>();
    const ids: string[] = [];
    for (let step = 0; step < 4000; step++) {
      const r = rand();
      if (r < 0.55 || ids.length === 0) {
        // A new memory, or a held one written again with other words.
        const id = ids.length > 0 && rand() < 0.3 ? ids[Math.floor(rand() * ids.length)]! : newId(step);
        if (!ids.includes(id)) ids.push(id);
        const tokens = Array.from({ length: 1 + Math.floor(rand() * 6) }, pick);
        const tf = termFrequencies(tokens);
        const terms = [...tf.keys()];
        const tfs = [...tf.values()];
        // Now and then a term listed twice: the last count stands, as one posting per term would.
        if (terms.length > 0 && rand() < 0.1) {
          terms.push(terms[0]!);
          tfs.push(tf.get(terms[0]!)! + 2);
          tf.set(terms[0]!, tf.get(terms[0]!)! + 2);
        }
        set.apply({ ...memory({ text: tokens.join(' ') }), id }, { terms, tfs, docLength: tokens.length });
        model.set(id, { tf, length: tokens.length });
      } else if (r < 0.8) {
        const id = ids[Math.floor(rand() * ids.length)]!;
        set.apply({ ...memory({ text: 'gone' }), id, status: rand() < 0.5 ? 'archived' : 'superseded' }, undefined);
        model.delete(id);
      } else {
        const query = Array.from({ length: 1 + Math.floor(rand() * 5) }, () => (rand() < 0.1 ? 'absent' : pick()));
        const k = 1 + Math.floor(rand() * 25);
        expect(set.bm25(query, k)).toEqual(heldBm25Reference(model, query, k));
      }
    }
    expect(set.size).toBe(model.size);
  });

  it('hands out frozen memories: a caller cannot change what the next request reads', () => {
    const set = new MemoryWorkingSet();
    const m = memory({ text: 'x', keywords: ['k'] });
    set.apply(m, undefined);
    const held = set.getActive([m.id], NOW)[0]!;
    expect(() => {
      (held as { importance: number }).importance = 1;
    }).toThrow();
    expect(() => held.keywords.push('y')).toThrow();
  });
});

/**
 * The held BM25 computed the plain way: each live memory's score summed over the query's terms in
 * the set's order (rarest first, then by term), so the float sums are the same operations; best
 * first, ties by id.
 */
function heldBm25Reference(model: ReadonlyMap<string, { tf: ReadonlyMap<string, number>; length: number }>, queryTerms: readonly string[], k: number): { id: string; score: number }[] {
  const df = new Map<string, number>();
  let total = 0;
  for (const doc of model.values()) {
    total += doc.length;
    for (const term of doc.tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  }
  const lengthWeight = BM25_B / bm25AvgDocLength(total, model.size);
  const terms = [...new Set(queryTerms)].filter((t) => df.has(t)).sort((a, b) => df.get(a)! - df.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
  const scored: { id: string; score: number }[] = [];
  for (const [id, doc] of model) {
    let score = 0;
    let matched = false;
    for (const term of terms) {
      const tf = doc.tf.get(term);
      if (tf === undefined) continue;
      matched = true;
      score += (bm25Idf(df.get(term)!, model.size) * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + lengthWeight * doc.length));
    }
    if (matched) scored.push({ id, score });
  }
  return scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, k);
}

/** A database of one user whose answers the test controls. */
function fakeSource() {
  const mark: WorkingSetMark = { horizon: 10n, registeredAt: '2026-01-01T00:00:00Z', deletedXid: null, truncations: '0' };
  const state = { mark, rows: [] as WorkingSetRow[], loads: 0, changes: [] as ((c: WorkingSetChanges) => void)[], nextChanges: undefined as WorkingSetChanges | undefined };
  const source: WorkingSetSource = {
    async load() {
      state.loads++;
      return { mark: { ...state.mark }, rows: state.rows };
    },
    changes() {
      if (state.nextChanges) {
        const c = state.nextChanges;
        state.nextChanges = undefined;
        return Promise.resolve(c);
      }
      return new Promise((resolve) => state.changes.push(resolve));
    },
  };
  return { state, source };
}

const fallback = {
  lists: {
    memoryLists: () => Promise.reject(new Error('read through SQL')),
    bm25WithMemories: () => Promise.reject(new Error('read through SQL')),
  },
  memories: { getActive: () => Promise.reject(new Error('read through SQL')) },
};

async function held(cache: WorkingSetCache, userId: string): Promise<void> {
  cache.forRequest(userId, NOW, fallback);
  cache.forRequest(userId, NOW, fallback);
  for (let i = 0; i < 20 && !cache.isHeld(userId); i++) await new Promise((r) => setTimeout(r, 1));
  expect(cache.isHeld(userId)).toBe(true);
}

describe('WorkingSetCache', () => {
  it('loads a user on their second recall, not their first', async () => {
    const { state, source } = fakeSource();
    const cache = new WorkingSetCache(source, { maxMemories: 100 });
    cache.forRequest('u', NOW, fallback);
    await new Promise((r) => setTimeout(r, 5));
    expect(state.loads).toBe(0);
    await held(cache, 'u');
    expect(state.loads).toBe(1);
  });

  it('never lets an older answer overwrite a newer row', async () => {
    const { state, source } = fakeSource();
    const first = memory({ text: 'lives in Berlin' });
    state.rows = [row(first, 5n)];
    const cache = new WorkingSetCache(source, { maxMemories: 100 });
    await held(cache, 'u');
    const older = cache.forRequest('u', NOW, fallback);
    const newer = cache.forRequest('u', NOW, fallback);
    const [answerOlder, answerNewer] = state.changes;
    const moved = { ...first, text: 'lives in Lisbon' };
    answerNewer!({ mark: { ...state.mark, horizon: 12n }, rows: [row(moved, 11n)], stablePrefix: {} });
    expect((await newer.getActive({ userId: 'u', ids: [first.id], now: NOW }))[0]!.text).toBe('lives in Lisbon');
    answerOlder!({ mark: { ...state.mark, horizon: 10n }, rows: [row(first, 5n)], stablePrefix: {} });
    expect((await older.getActive({ userId: 'u', ids: [first.id], now: NOW }))[0]!.text).toBe('lives in Lisbon');
  });

  it('reads through SQL and loads again after a deletion, a new registration of the id, or too many changes', async () => {
    for (const moved of [
      (m: WorkingSetMark) => ({ ...m, deletedXid: 11n }),
      (m: WorkingSetMark) => ({ ...m, registeredAt: '2026-12-03T00:00:00Z' }),
      (m: WorkingSetMark) => ({ ...m, truncations: '1' }),
    ]) {
      const { state, source } = fakeSource();
      const cache = new WorkingSetCache(source, { maxMemories: 100 });
      await held(cache, 'u');
      state.nextChanges = { mark: moved(state.mark), rows: [], stablePrefix: {} };
      const reads = cache.forRequest('u', NOW, fallback);
      await expect(reads.getActive({ userId: 'u', ids: ['x'], now: NOW })).rejects.toThrow('read through SQL');
      expect(state.loads).toBe(2);
    }
    const { state, source } = fakeSource();
    const cache = new WorkingSetCache(source, { maxMemories: 100, maxChanges: 2 });
    await held(cache, 'u');
    state.nextChanges = { mark: state.mark, rows: [row(memory({ text: 'a' }), 11n), row(memory({ text: 'b' }), 11n)], stablePrefix: {} };
    await expect(cache.forRequest('u', NOW, fallback).getActive({ userId: 'u', ids: ['x'], now: NOW })).rejects.toThrow('read through SQL');
  });

  it('drops a set read by nobody for a while, so a purged user does not stay in memory until their next recall', async () => {
    const { source } = fakeSource();
    let t = 1_000_000;
    const cache = new WorkingSetCache(source, { maxMemories: 100, interestMs: 60_000, clock: () => t });
    await held(cache, 'u');
    t += 30_000;
    cache.sweep();
    expect(cache.isHeld('u')).toBe(true);
    t += 31_000;
    cache.sweep();
    expect(cache.isHeld('u')).toBe(false);
  });

  it('reads through SQL, each read on its own, when the changes statement fails', async () => {
    const { source } = fakeSource();
    const cache = new WorkingSetCache(source, { maxMemories: 100 });
    await held(cache, 'u');
    source.changes = () => Promise.reject(new Error('connection reset'));
    const asked: string[] = [];
    const sql = {
      lists: { memoryLists: () => (asked.push('lists'), Promise.resolve({} as never)), bm25WithMemories: () => (asked.push('bm25'), Promise.resolve({ hits: [], memories: [] })) },
      memories: { getActive: () => (asked.push('active'), Promise.resolve([])) },
    };
    const reads = cache.forRequest('u', NOW, sql);
    await reads.bm25WithMemories({ userId: 'u', now: NOW, tokens: ['a'], k: 5 });
    await reads.getActive({ userId: 'u', ids: ['x'], now: NOW });
    expect(asked).toEqual(['bm25', 'active']);
    expect(cache.isHeld('u')).toBe(false);
    expect(cache.reads.dropped).toBe(1);
  });

  it('keeps within its memory bound by dropping the least recently used user', async () => {
    const { state, source } = fakeSource();
    state.rows = [row(memory({ text: 'a' }), 1n), row(memory({ text: 'b' }), 1n)];
    const cache = new WorkingSetCache(source, { maxMemories: 3 });
    await held(cache, 'first');
    await held(cache, 'second');
    expect(cache.isHeld('first')).toBe(false);
    expect(cache.heldMemories).toBe(2);
  });
});
