/**
 * In-memory fakes of the memory-side ports (src/core/ports/), for millisecond unit tests of the
 * services. They keep the contracts the PostgreSQL and Chroma adapters keep — user scoping,
 * active-only search, the outbox filled by the writes, a unit of work that rolls back — and
 * nothing else (BM25 is a plain count of shared tokens).
 */
import { ErrorCode, MemoryServiceError } from '../../src/core/errors';
import type { Embedder, ImportancePatch, MemoryEvent, MemoryEventLog, MemoryGraph, MemoryRepository, MemoryTimeRoute, NewMemory, OutboxEntry, StoredMemoryEvent, VectorHit, VectorIndex, VectorItem, VectorOutbox } from '../../src/core/ports/memory';
import type { MemoryTransaction, UnitOfWork } from '../../src/core/ports/transaction';
import { tokenizeForIndex } from '../../src/adapters/text/jieba';
import type { EntityRef, Memory, MemoryScope, MemoryStatus, MemoryType, RelationRef } from '../../src/core/types';
import type { ServiceDeps } from '../../src/shared/deps';
import { loadConfig } from '../../src/config';

interface Row extends Memory {
  normalizedText: string;
  tokens: string[];
  archivedAt: Date | null;
}

interface OutboxRow {
  userId: string;
  op: 'upsert' | 'delete';
  enqueuedAt: Date;
  attempts: number;
  lastError: string | null;
}

/** Everything the fakes hold; copied before a unit of work and put back when it fails. */
interface State {
  memories: Map<string, Row>;
  events: StoredMemoryEvent[];
  links: { userId: string; memoryId: string; entities: EntityRef[]; relations: RelationRef[] }[];
  outbox: Map<string, OutboxRow>;
}

const copy = <T>(x: T): T => structuredClone(x);
const notExpired = (m: Memory, now: Date | undefined) => m.expiresAt === null || m.expiresAt > (now ?? new Date());
const keepTypes = (m: Memory, types?: MemoryType[]) => !types || types.length === 0 || types.includes(m.type);

function toMemory(r: Row): Memory {
  const { normalizedText: _n, tokens: _t, archivedAt: _a, ...memory } = copy(r);
  return memory;
}

let clock = 0;
/** Strictly increasing enqueue times, like clock_timestamp(). */
const tick = () => new Date(Date.UTC(2026, 0, 1) + ++clock);

/** The memory repository, event log, graph and outbox over one shared state. */
export class InMemoryMemoryStore {
  state: State = { memories: new Map(), events: [], links: [], outbox: new Map() };
  /** Called with the method name before every repository call; throw from it to make a call fail. */
  onCall: (method: string) => void | Promise<void> = () => {};

  readonly memories: MemoryRepository = repositoryOf(this);
  readonly events: MemoryEventLog = eventLogOf(this);
  readonly graph: MemoryGraph = graphOf(this);
  readonly outbox: VectorOutbox = outboxOf(this);
  readonly timeRoute: MemoryTimeRoute = {
    memoriesSaidIn: async ({ userId, ranges, k, now }) => {
      await this.onCall('memoriesSaidIn');
      return this.active(userId, now)
        .filter((m) => ranges.some((r) => m.createdAt >= r.start && m.createdAt < r.end))
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .slice(0, k)
        .map((m) => m.id);
    },
  };

  /** One at a time (the advisory lock), rolled back on error. */
  readonly unitOfWork: UnitOfWork = serialUnitOfWork(
    () => ({ ...unsupportedTransaction(), memories: this.memories, events: this.events, graph: this.graph }),
    () => {
      const saved = copy(this.state);
      return { rollback: () => void (this.state = saved) };
    },
  );

  /** A memory as stored (status, counters, links), whatever its status. */
  row(id: string): Row | undefined {
    return this.state.memories.get(id);
  }

  all(userId: string): Memory[] {
    return [...this.state.memories.values()].filter((m) => m.userId === userId).map(toMemory);
  }

  active(userId: string, now?: Date): Row[] {
    return [...this.state.memories.values()].filter((m) => m.userId === userId && m.status === 'active' && notExpired(m, now));
  }

  enqueue(userId: string, memoryId: string, op: 'upsert' | 'delete'): void {
    this.state.outbox.set(memoryId, { userId, op, enqueuedAt: tick(), attempts: 0, lastError: null });
  }
}

function repositoryOf(store: InMemoryMemoryStore): MemoryRepository {
  const call = (method: string) => store.onCall(method);
  const owned = (userId: string, id: string) => {
    const m = store.state.memories.get(id);
    return m && m.userId === userId ? m : undefined;
  };
  return {
    async get({ userId, id }) {
      await call('get');
      const m = owned(userId, id);
      return m ? toMemory(m) : undefined;
    },
    async getActive({ userId, ids, now }) {
      await call('getActive');
      return store.active(userId, now).filter((m) => ids.includes(m.id)).map(toMemory);
    },
    async findActiveByNormalized({ userId, normalized }) {
      await call('findActiveByNormalized');
      const m = [...store.state.memories.values()].find((r) => r.userId === userId && r.status === 'active' && r.normalizedText === normalized);
      return m ? toMemory(m) : undefined;
    },
    async findArchivedByNormalized({ userId, normalized }) {
      await call('findArchivedByNormalized');
      const m = [...store.state.memories.values()]
        .filter((r) => r.userId === userId && r.status === 'archived' && r.normalizedText === normalized)
        .sort((a, b) => (b.archivedAt?.getTime() ?? 0) - (a.archivedAt?.getTime() ?? 0))[0];
      return m ? toMemory(m) : undefined;
    },
    async list({ userId, status, type, limit, offset }) {
      await call('list');
      const all = [...store.state.memories.values()]
        .filter((m) => m.userId === userId && (!status || m.status === status) && (!type || m.type === type))
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
      return { memories: all.slice(offset, offset + limit).map(toMemory), total: all.length };
    },
    async bm25({ userId, tokens, k, types }) {
      await call('bm25');
      const wanted = new Set(tokens);
      if (wanted.size === 0) return [];
      return store
        .active(userId)
        .filter((m) => keepTypes(m, types))
        .map((m) => ({ id: m.id, score: new Set(m.tokens.filter((t) => wanted.has(t))).size }))
        .filter((h) => h.score > 0)
        .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
        .slice(0, k);
    },
    async recent({ userId, k, types }) {
      await call('recent');
      return store
        .active(userId)
        .filter((m) => keepTypes(m, types))
        .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || b.importance - a.importance)
        .slice(0, k)
        .map((m) => m.id);
    },
    async mostImportant({ userId, k, minImportance, types, now }) {
      await call('mostImportant');
      return store
        .active(userId, now)
        .filter((m) => m.type !== 'instruction' && m.importance >= minImportance && keepTypes(m, types))
        .sort((a, b) => b.importance - a.importance)
        .slice(0, k)
        .map((m) => m.id);
    },
    async byTypes({ userId, types, k, scope, now }: { userId: string; types: MemoryType[]; k: number; scope?: MemoryScope; now?: Date }) {
      await call('byTypes');
      return store
        .active(userId, now)
        .filter((m) => types.includes(m.type) && (!scope || m.scope === scope) && !m.pending)
        .sort((a, b) => b.importance - a.importance)
        .slice(0, k)
        .map(toMemory);
    },
    async insert(m: NewMemory) {
      await call('insert');
      if (store.state.memories.has(m.id)) return false;
      store.state.memories.set(m.id, { ...copy(m), archivedAt: null });
      store.enqueue(m.userId, m.id, m.status === 'active' ? 'upsert' : 'delete');
      return true;
    },
    async lock({ userId, id }) {
      await call('lock');
      const m = owned(userId, id);
      return m ? toMemory(m) : undefined;
    },
    async setStatus({ userId, id, status, at, supersededBy, tokens }: { userId: string; id: string; status: MemoryStatus; at: Date; supersededBy?: string; tokens?: string[] }) {
      await call('setStatus');
      const m = owned(userId, id);
      if (!m) return undefined;
      const prev = m.status;
      m.status = status;
      m.updatedAt = new Date(Math.max(m.updatedAt.getTime(), at.getTime()));
      m.supersededBy = supersededBy ?? m.supersededBy;
      m.archivedAt = status === 'archived' ? at : null;
      if (status === 'active') m.lastAccessedAt = at;
      if (prev === 'active' && status !== 'active') store.enqueue(userId, id, 'delete');
      else if (prev !== 'active' && status === 'active') {
        m.tokens = tokens ?? [];
        store.enqueue(userId, id, 'upsert');
      }
      return toMemory(m);
    },
    async reinforce({ userId, id, at, recalled, emotionTags, messageIds, importance, importanceLevel }) {
      await call('reinforce');
      const m = owned(userId, id);
      if (!m) return undefined;
      const later = (d: Date | null) => new Date(Math.max(d?.getTime() ?? at.getTime(), at.getTime()));
      Object.assign(m, {
        frequencyCount: m.frequencyCount + 1,
        lastAccessedAt: later(m.lastAccessedAt),
        lastRecalledAt: recalled ? later(m.lastRecalledAt) : m.lastRecalledAt,
        updatedAt: later(m.updatedAt),
        importance,
        importanceLevel,
        decayScore: 1,
        emotionTags: [...new Set([...m.emotionTags, ...(emotionTags ?? [])])],
      });
      if (messageIds) m.source = { ...m.source, messageIds: [...new Set([...(m.source.messageIds ?? []), ...messageIds])] };
      return toMemory(m);
    },
    async setImportance({ userId, id, importance, importanceLevel }: { userId: string; id: string } & ImportancePatch) {
      await call('setImportance');
      const m = owned(userId, id);
      if (m) Object.assign(m, { importance, importanceLevel, decayScore: 1 });
    },
    async linkSupersedes({ userId, newId, oldId }) {
      await call('linkSupersedes');
      const m = owned(userId, newId);
      if (m) m.supersedes = oldId;
    },
    async confirm({ userId, id, at }) {
      await call('confirm');
      const m = owned(userId, id);
      if (!m?.pending) return undefined;
      m.pending = false;
      if (at > m.updatedAt) m.updatedAt = at;
      return toMemory(m);
    },
  };
}

function eventLogOf(store: InMemoryMemoryStore): MemoryEventLog {
  return {
    async append({ event, at }: { event: MemoryEvent; at?: Date }) {
      await store.onCall('append');
      if (event.idempotencyKey && store.state.events.some((e) => e.userId === event.userId && e.idempotencyKey === event.idempotencyKey)) return false;
      store.state.events.push({ ...copy(event), messageIds: event.messageIds ?? [], id: String(store.state.events.length + 1), createdAt: at ?? new Date() });
      return true;
    },
    async findByKey({ userId, key }) {
      await store.onCall('findByKey');
      const e = store.state.events.find((x) => x.userId === userId && x.idempotencyKey === key);
      return e ? copy(e) : undefined;
    },
    async history({ userId, memoryId }) {
      await store.onCall('history');
      return store.state.events.filter((e) => e.userId === userId && e.memoryId === memoryId).map(copy);
    },
  };
}

function graphOf(store: InMemoryMemoryStore): MemoryGraph {
  return {
    async link(input) {
      await store.onCall('link');
      store.state.links.push(copy(input));
    },
    async entities({ userId }) {
      const names = store.state.links.filter((l) => l.userId === userId).flatMap((l) => l.entities);
      return [...new Map(names.map((e) => [`${e.kind}:${e.name}`, { name: e.name, kind: e.kind, memories: 1 }])).values()];
    },
  };
}

function outboxOf(store: InMemoryMemoryStore): VectorOutbox {
  return {
    async pending({ limit, userId, ids }): Promise<OutboxEntry[]> {
      return [...store.state.outbox.entries()]
        .filter(([id, o]) => (!userId || o.userId === userId) && (!ids || ids.includes(id)))
        .sort((a, b) => a[1].enqueuedAt.getTime() - b[1].enqueuedAt.getTime())
        .slice(0, limit)
        .map(([memoryId, o]) => {
          const m = store.state.memories.get(memoryId)!;
          return { memoryId, userId: o.userId, op: o.op, enqueuedAt: o.enqueuedAt, text: m.text, type: m.type, createdAt: m.createdAt };
        });
    },
    async done({ userId, memoryId, enqueuedAt }) {
      const o = store.state.outbox.get(memoryId);
      if (o && o.userId === userId && o.enqueuedAt.getTime() === enqueuedAt.getTime()) store.state.outbox.delete(memoryId);
    },
    async failed({ userId, memoryIds, error }) {
      for (const id of memoryIds) {
        const o = store.state.outbox.get(id);
        if (o && o.userId === userId) Object.assign(o, { attempts: o.attempts + 1, lastError: error });
      }
    },
  };
}

/**
 * A unit of work over in-memory state: transactions run one at a time (the advisory lock); `begin`
 * is called as each starts and returns how to finish it (`rollback` when the work failed).
 */
export function serialUnitOfWork(tx: () => MemoryTransaction, begin: () => { commit?: () => void; rollback: () => void }): UnitOfWork {
  let queue: Promise<unknown> = Promise.resolve();
  const transaction = <T>(work: (tx: MemoryTransaction) => Promise<T>): Promise<T> => {
    const run = async () => {
      const end = begin();
      try {
        const result = await work(tx());
        end.commit?.();
        return result;
      } catch (err) {
        end.rollback();
        throw err;
      }
    };
    const result = queue.then(run, run);
    queue = result.catch(() => {});
    return result;
  };
  return { forUser: ({ work }) => transaction(work), run: ({ work }) => transaction(work) };
}

const TRANSACTION_PORTS = ['conversations', 'reminders', 'notifications', 'settings', 'memories', 'events', 'graph', 'lifecycle', 'erasure', 'purge', 'retention', 'watermarks'] as const;

/** A transaction whose every repository refuses: a fake fills in the ones it keeps. */
export function unsupportedTransaction(): MemoryTransaction {
  return Object.fromEntries(TRANSACTION_PORTS.map((port) => [port, unsupported(port)])) as unknown as MemoryTransaction;
}

function unsupported<T extends object>(port: string): T {
  return new Proxy({} as T, {
    get: (_t, method) => () => Promise.reject(new Error(`${port}.${String(method)} is not faked`)),
  });
}

/** Chroma's contract in memory: per-user collections, cosine similarity, a type filter. */
export class InMemoryVectorIndex implements VectorIndex {
  readonly byUser = new Map<string, Map<string, VectorItem>>();
  /** Set to make every call fail as Chroma does when it is down. */
  down = false;
  /** Set to make only writes (upsert, remove) fail. */
  failWrites = false;

  private check(write = false): void {
    if (this.down || (write && this.failWrites)) throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, 'Chroma unreachable');
  }

  private of(userId: string): Map<string, VectorItem> {
    let m = this.byUser.get(userId);
    if (!m) this.byUser.set(userId, (m = new Map()));
    return m;
  }

  async upsert({ userId, items }: { userId: string; items: VectorItem[] }): Promise<void> {
    this.check(true);
    for (const item of items) this.of(userId).set(item.id, copy(item));
  }

  async query({ userId, embedding, k, types }: { userId: string; embedding: number[]; k: number; types?: MemoryType[] }): Promise<VectorHit[]> {
    this.check();
    return [...this.of(userId).values()]
      .filter((v) => !types || types.length === 0 || types.includes(v.type))
      .map((v) => ({ id: v.id, similarity: cosine(embedding, v.embedding) }))
      .sort((a, b) => b.similarity - a.similarity || a.id.localeCompare(b.id))
      .slice(0, k);
  }

  async remove({ userId, ids }: { userId: string; ids: string[] }): Promise<void> {
    this.check(true);
    for (const id of ids) this.of(userId).delete(id);
  }

  async vectorsOf({ userId, ids }: { userId: string; ids: string[] }): Promise<Map<string, number[]>> {
    this.check();
    const mine = this.of(userId);
    return new Map(ids.flatMap((id) => (mine.has(id) ? [[id, mine.get(id)!.embedding] as [string, number[]]] : [])));
  }

  async removeMany({ items }: { items: { userId: string; id: string }[] }): Promise<void> {
    this.check(true);
    for (const { userId, id } of items) this.of(userId).delete(id);
  }

  async dropUser(userId: string): Promise<boolean> {
    this.check();
    return this.byUser.delete(userId);
  }

  async moveUser({ from, to }: { from: string; to: string }): Promise<number> {
    this.check();
    const items = this.of(from);
    this.byUser.delete(from);
    this.byUser.set(to, items);
    return items.size;
  }

  async heartbeat(): Promise<void> {
    this.check();
  }
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Bag-of-tokens vectors: texts sharing words are similar, identical texts have similarity 1. */
export class FakeEmbedder implements Embedder {
  calls = 0;
  constructor(private readonly dimensions = 64) {}

  private vector(text: string): number[] {
    const v = new Array<number>(this.dimensions).fill(0);
    for (const token of tokenizeForIndex(text)) {
      let h = 0;
      for (const ch of token) h = (h * 31 + ch.codePointAt(0)!) >>> 0;
      v[h % this.dimensions]! += 1;
    }
    return v;
  }

  async embedQuery({ text }: { text: string }): Promise<number[]> {
    this.calls++;
    return this.vector(text);
  }

  async embedDocuments({ texts }: { texts: string[] }): Promise<number[][]> {
    this.calls++;
    return texts.map((t) => this.vector(t));
  }
}

/** Service dependencies wired to the fakes (no pool: the memory services do not need one). */
export function fakeDeps(overrides: Partial<ServiceDeps> = {}) {
  const store = new InMemoryMemoryStore();
  const vectors = new InMemoryVectorIndex();
  const embedder = new FakeEmbedder();
  const config = loadConfig({ NODE_ENV: 'test' });
  const deps = {
    memories: store.memories,
    memoryEvents: store.events,
    timeRoute: store.timeRoute,
    vectorOutbox: store.outbox,
    unitOfWork: store.unitOfWork,
    embedder,
    vectors,
    config,
    ...overrides,
  } satisfies Partial<ServiceDeps>;
  return { deps, store, vectors, embedder };
}
