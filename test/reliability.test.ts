import { describe, expect, it } from 'vitest';
import type { MemoryCandidate } from '../src/core/types';
import { keyCandidates, statementKey } from '../src/conversation/extraction-runs';
import type { OutboxRetryRepository } from '../src/core/ports/memory';
import { backoffMs, drainOutbox, type DueOutboxEntry, type RetryPolicy } from '../src/memory/outbox-drain';
import { candidate } from './support/candidate';

// Pure parts of issue #14's reliability work: decision keys that do not depend on generated text,
// and the outbox drain's isolation, backoff and dead letters (an in-memory outbox and a vector
// index that refuses what the test says). The real stack runs in test/reliability.int.test.ts.

describe('decision keys of extracted statements', () => {
  const base = (over: Partial<MemoryCandidate>): MemoryCandidate => candidate(over.text ?? 'I love hiking on weekends.', { type: 'preference', messageIds: ['m1'], ...over });

  it('do not change with the wording of the statement', () => {
    const a = statementKey('u', 'c', base({ text: 'I love hiking on weekends.' }), 0);
    const b = statementKey('u', 'c', base({ text: 'The user enjoys weekend hikes' }), 0);
    expect(a).toBe(b);
    expect(a).not.toContain('hiking');
  });

  it('name the source messages as a set, the type and the subject', () => {
    expect(statementKey('u', 'c', base({ messageIds: ['m2', 'm1'] }), 0)).toBe(statementKey('u', 'c', base({ messageIds: ['m1', 'm2', 'm1'] }), 0));
    expect(statementKey('u', 'c', base({}), 0)).not.toBe(statementKey('u', 'c', base({ type: 'fact' }), 0));
    expect(statementKey('u', 'c', base({ subject: '花生' }), 0)).not.toBe(statementKey('u', 'c', base({ subject: '猫' }), 0));
    expect(statementKey('u', 'c', base({}), 0)).not.toBe(statementKey('u', 'c2', base({}), 0));
    expect(statementKey('u', 'c', base({}), 0)).not.toBe(statementKey('u2', 'c', base({}), 0));
  });

  it('number two statements of one message and type, and decide a repeated one once', () => {
    const keyed = keyCandidates('u', 'c', [
      base({ type: 'fact', text: 'I live in Porto.' }),
      base({ type: 'fact', text: 'I work as a nurse.' }),
      base({ type: 'fact', text: 'I live in Porto' }), // the same statement again
      base({ type: 'preference', text: 'I love hiking.' }),
    ]);
    expect(keyed.map((k) => k.candidate.text)).toEqual(['I live in Porto.', 'I work as a nurse.', 'I love hiking.']);
    expect(keyed.map((k) => k.key.split('#')[1])).toEqual(['0', '1', '0']);
    expect(new Set(keyed.map((k) => k.key)).size).toBe(3);
  });

  it('give a re-worded second extraction of the same messages the same keys', () => {
    const first = keyCandidates('u', 'c', [base({ type: 'fact', text: 'I live in Porto.' }), base({ type: 'fact', text: 'I work as a nurse.' })]);
    const second = keyCandidates('u', 'c', [base({ type: 'fact', text: 'Lives in Porto, Portugal' }), base({ type: 'fact', text: 'Works as a nurse' })]);
    expect(second.map((k) => k.key)).toEqual(first.map((k) => k.key));
  });
});

/** An outbox in memory, with the PostgreSQL store's semantics (due, backoff, dead letters). */
class MemoryOutbox implements OutboxRetryRepository {
  readonly rows = new Map<string, DueOutboxEntry & { nextAttemptAt: number; dead: boolean; lastError?: string }>();
  now = 0;

  add(userId: string, memoryId: string, op: 'upsert' | 'delete' = 'upsert'): void {
    this.rows.set(memoryId, { memoryId, userId, op, enqueuedAt: new Date(this.now), attempts: 0, memory: { text: `text ${memoryId}`, type: 'fact', createdAt: new Date(0) }, nextAttemptAt: this.now++, dead: false });
  }
  async due({ limit, userId }: { limit: number; userId?: string }) {
    return [...this.rows.values()]
      .filter((r) => !r.dead && r.nextAttemptAt <= this.now && (!userId || r.userId === userId))
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
      .slice(0, limit)
      .map((r) => ({ ...r }));
  }
  async done(entry: DueOutboxEntry) {
    this.rows.delete(entry.memoryId);
  }
  async failed({ entries, error, policy }: { entries: DueOutboxEntry[]; error: string; policy: RetryPolicy }) {
    let deadLettered = 0;
    for (const e of entries) {
      const row = this.rows.get(e.memoryId)!;
      row.nextAttemptAt = this.now + backoffMs(policy, row.attempts);
      row.attempts++;
      row.lastError = error;
      row.dead = row.attempts >= policy.maxAttempts;
      if (row.dead) deadLettered++;
    }
    return { deadLettered };
  }
  async health() {
    const rows = [...this.rows.values()];
    return { pending: rows.filter((r) => !r.dead).length, deadLetters: rows.filter((r) => r.dead).length, oldestPendingSeconds: null };
  }
}

/** A vector index that refuses writes containing a poisoned id, or everything while `down`. */
function vectorsRefusing(poisoned: Set<string>) {
  const written: string[] = [];
  const state = { down: false, calls: 0 };
  const check = (ids: string[]) => {
    state.calls++;
    if (state.down) throw new Error('Chroma unreachable');
    const bad = ids.find((id) => poisoned.has(id));
    if (bad) throw new Error(`Chroma refused ${bad}: dimension mismatch`);
  };
  return {
    written,
    state,
    vectors: {
      async upsert({ items }: { userId: string; items: { id: string }[] }) {
        check(items.map((i) => i.id));
        written.push(...items.map((i) => i.id));
      },
      async remove({ ids }: { userId: string; ids: string[] }) {
        check(ids);
        written.push(...ids.map((id) => `-${id}`));
      },
    },
  };
}

const embedder = { embedDocuments: async ({ texts }: { texts: string[] }) => texts.map(() => [1, 0, 0]) };
const policy: RetryPolicy = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40 };

describe('vector outbox drain', () => {
  it('a poisoned entry fails alone: the rest of its user’s batch and later users drain', async () => {
    const outbox = new MemoryOutbox();
    outbox.add('alice', 'a1');
    outbox.add('alice', 'poison');
    outbox.add('alice', 'a2');
    outbox.add('bob', 'b1');
    const { vectors, written } = vectorsRefusing(new Set(['poison']));
    const result = await drainOutbox({ outbox, vectors, embedder }, { policy });
    expect(result).toMatchObject({ upserted: 3, failed: 1, deadLettered: 0, stoppedEarly: false });
    expect(written.sort()).toEqual(['a1', 'a2', 'b1']);
    expect([...outbox.rows.keys()]).toEqual(['poison']);
    expect(outbox.rows.get('poison')).toMatchObject({ attempts: 1, nextAttemptAt: outbox.now + 10 });
  });

  it('backs a failing entry off (base·2^n, capped) and dead-letters it after maxAttempts; it never blocks the head', async () => {
    const outbox = new MemoryOutbox();
    outbox.add('alice', 'poison');
    const { vectors, written } = vectorsRefusing(new Set(['poison']));
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const before = outbox.now;
      await drainOutbox({ outbox, vectors, embedder }, { policy, limit: 1 });
      const row = outbox.rows.get('poison')!;
      if (!row.dead) waits.push(row.nextAttemptAt - before);
      // A fresh entry behind it, due now: with the poisoned one backing off it drains at once.
      outbox.add('bob', `b${i}`);
      await drainOutbox({ outbox, vectors, embedder }, { policy, limit: 1 });
      expect(written).toContain(`b${i}`);
      outbox.now = row.nextAttemptAt;
    }
    expect(waits).toEqual([10, 20]);
    expect(outbox.rows.get('poison')).toMatchObject({ attempts: 3, dead: true });
    expect(await outbox.health()).toEqual({ pending: 0, deadLetters: 1, oldestPendingSeconds: null });
    // Dead: no longer offered to the drain.
    expect(await outbox.due({ limit: 10 })).toEqual([]);
  });

  it('when Chroma is down, counts one failure per user and stops, leaving the other entries’ attempts alone', async () => {
    const outbox = new MemoryOutbox();
    for (const user of ['u1', 'u2', 'u3', 'u4']) for (const n of [1, 2, 3]) outbox.add(user, `${user}-${n}`);
    const { vectors, state } = vectorsRefusing(new Set());
    state.down = true;
    const result = await drainOutbox({ outbox, vectors, embedder }, { policy });
    expect(result).toMatchObject({ upserted: 0, failed: 3, stoppedEarly: true });
    // Per user: the batch, then its first entry alone; the fourth user is not tried at all.
    expect(state.calls).toBe(6);
    const attempted = [...outbox.rows.values()].filter((r) => r.attempts > 0).map((r) => r.memoryId);
    expect(attempted).toEqual(['u1-1', 'u2-1', 'u3-1']);
  });

  it('clears an upsert whose memory is gone and sends deletes without one', async () => {
    const outbox = new MemoryOutbox();
    outbox.add('alice', 'gone');
    outbox.rows.get('gone')!.memory = undefined;
    outbox.add('alice', 'erased', 'delete');
    outbox.rows.get('erased')!.memory = undefined;
    const { vectors, written } = vectorsRefusing(new Set());
    const result = await drainOutbox({ outbox, vectors, embedder }, { policy });
    expect(result).toMatchObject({ upserted: 0, removed: 1, failed: 0 });
    expect(written).toEqual(['-erased']);
    expect(outbox.rows.size).toBe(0);
  });
});
