import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PostgresProactiveEventFeed } from '../src/adapters/postgres/proactive-listener';
import { PROACTIVE_CHANNEL, type NotificationRecord, type ProactiveEvent, type ProactiveEventFeed } from '../src/core/ports/proactive';
import { listenForProactiveEvents, NotificationHub, type LiveEvent } from '../src/proactive/notifications';

/** A pooled connection that records its queries and releases; emits like pg's client. */
class FakeClient extends EventEmitter {
  queries: string[] = [];
  releases: (Error | undefined)[] = [];
  /** A server that stopped answering: every query after the LISTEN waits forever. */
  hung = false;
  query(sql: string): Promise<void> {
    this.queries.push(sql);
    return this.hung && !sql.startsWith('LISTEN') ? new Promise<void>(() => {}) : Promise.resolve();
  }
  release(err?: Error): void {
    this.releases.push(err);
  }
}

/** A pool handing out fake clients, or failing the next `failures` connects. */
function fakePool(failures = 0) {
  const clients: FakeClient[] = [];
  let left = failures;
  const connects: number[] = [];
  const pool = {
    connect: () => {
      connects.push(Date.now());
      if (left > 0) {
        left -= 1;
        return Promise.reject(new Error('refused'));
      }
      const c = new FakeClient();
      clients.push(c);
      return Promise.resolve(c as unknown as pg.PoolClient);
    },
  } as unknown as Pick<pg.Pool, 'connect'>;
  return { pool, clients, connects };
}

const notify = (c: FakeClient, payload: string) => c.emit('notification', { channel: PROACTIVE_CHANNEL, processId: 1, payload });
const flush = () => vi.advanceTimersByTimeAsync(0);

afterEach(() => vi.useRealTimers());

describe('PostgresProactiveEventFeed (the LISTEN connection)', () => {
  it('LISTENs on the channel and delivers well-formed events only', async () => {
    vi.useFakeTimers();
    const { pool, clients } = fakePool();
    const events: ProactiveEvent[] = [];
    const sub = new PostgresProactiveEventFeed(pool).listen({ onEvent: async (e) => void events.push(e), log: () => {} });
    await flush();
    expect(clients[0]?.queries).toEqual([`LISTEN ${PROACTIVE_CHANNEL}`]);
    notify(clients[0]!, JSON.stringify({ type: 'notification', userId: 'u1', id: 'n1', seq: 3 }));
    notify(clients[0]!, 'not json');
    notify(clients[0]!, JSON.stringify({ type: 'other', userId: 'u1' }));
    notify(clients[0]!, JSON.stringify({ type: 'reminder', userId: 7 }));
    await flush();
    expect(events).toEqual([{ type: 'notification', userId: 'u1', id: 'n1', seq: 3 }]);
    await sub.close();
  });

  it('a failed handler is logged and the feed goes on', async () => {
    vi.useFakeTimers();
    const { pool, clients } = fakePool();
    const log = vi.fn();
    let calls = 0;
    const sub = new PostgresProactiveEventFeed(pool).listen({ onEvent: () => (calls++ === 0 ? Promise.reject(new Error('boom')) : Promise.resolve()), log });
    await flush();
    const e = JSON.stringify({ type: 'reminder', userId: 'u1', reminderId: 'r1', status: 'fired' });
    notify(clients[0]!, e);
    notify(clients[0]!, e);
    await flush();
    expect(calls).toBe(2);
    expect(log).toHaveBeenCalledWith('reading a proactive event failed', expect.any(Error));
    await sub.close();
  });

  it('reconnects after a lost connection, backing off 500 ms, 1 s, … while connects fail, and resets once connected', async () => {
    vi.useFakeTimers();
    const { pool, clients, connects } = fakePool(2);
    const log = vi.fn();
    const sub = new PostgresProactiveEventFeed(pool).listen({ onEvent: async () => {}, log });
    await flush();
    expect(clients).toHaveLength(0);
    expect(log).toHaveBeenCalledWith('proactive listener could not connect', expect.any(Error));
    await vi.advanceTimersByTimeAsync(499);
    expect(connects).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(connects).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(connects).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(clients).toHaveLength(1);

    const lost = new Error('terminated');
    clients[0]!.emit('error', lost);
    expect(log).toHaveBeenCalledWith('proactive listener connection lost', lost);
    expect(clients[0]!.releases).toEqual([lost]);
    // A second error on the handed-back connection neither releases again nor schedules twice.
    clients[0]!.emit('error', new Error('again'));
    expect(clients[0]!.releases).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(clients).toHaveLength(2);
    expect(clients[1]!.queries).toEqual([`LISTEN ${PROACTIVE_CHANNEL}`]);
    await sub.close();
  });

  it('a connection that stops answering the heartbeat is given up as failed and opened again', async () => {
    vi.useFakeTimers();
    const { pool, clients } = fakePool();
    const log = vi.fn();
    const sub = new PostgresProactiveEventFeed(pool, { heartbeatMs: 1000, heartbeatTimeoutMs: 2000 }).listen({ onEvent: async () => {}, log });
    await flush();
    await vi.advanceTimersByTimeAsync(1000);
    expect(clients[0]!.queries).toEqual([`LISTEN ${PROACTIVE_CHANNEL}`, 'SELECT 1']);
    expect(clients[0]!.releases).toEqual([]);
    clients[0]!.hung = true;
    // The next heartbeat goes unanswered: lost once its timeout runs out, not before.
    await vi.advanceTimersByTimeAsync(1000 + 1999);
    expect(clients[0]!.releases).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(clients[0]!.releases).toEqual([expect.any(Error)]);
    expect(log).toHaveBeenCalledWith('proactive listener connection stopped answering', expect.any(Error));
    await vi.advanceTimersByTimeAsync(500);
    expect(clients).toHaveLength(2);
    expect(clients[1]!.queries).toEqual([`LISTEN ${PROACTIVE_CHANNEL}`]);
    await sub.close();
  });

  it('close UNLISTENs, hands the connection back once, and stops reconnecting', async () => {
    vi.useFakeTimers();
    const { pool, clients, connects } = fakePool();
    const sub = new PostgresProactiveEventFeed(pool).listen({ onEvent: async () => {}, log: () => {} });
    await flush();
    await sub.close();
    expect(clients[0]!.queries).toEqual([`LISTEN ${PROACTIVE_CHANNEL}`, `UNLISTEN ${PROACTIVE_CHANNEL}`]);
    expect(clients[0]!.releases).toEqual([undefined]);
    clients[0]!.emit('error', new Error('server gone'));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(clients[0]!.releases).toHaveLength(1);
    expect(connects).toHaveLength(1);
  });

  it('closed while connecting, the new connection goes straight back without waiting for a LISTEN it no longer needs', async () => {
    vi.useFakeTimers();
    const { pool, clients } = fakePool();
    const sub = new PostgresProactiveEventFeed(pool).listen({ onEvent: async () => {}, log: () => {} });
    await sub.close();
    expect(clients[0]!.releases).toEqual([undefined]);
    expect(clients[0]!.queries).not.toContain(`UNLISTEN ${PROACTIVE_CHANNEL}`);
  });
});

describe('listenForProactiveEvents (the fan-out to open pages)', () => {
  it('reads announced events back through the ports and publishes them to subscribed users only', async () => {
    let deliver: (e: ProactiveEvent) => Promise<void> = async () => {};
    const close = vi.fn(() => Promise.resolve());
    const feed: ProactiveEventFeed = {
      listen: ({ onEvent }) => {
        deliver = onEvent;
        return { close };
      },
    };
    const notification = { id: 'n1', seq: 4, userId: 'u1' } as NotificationRecord;
    const get = vi.fn((input: { userId: string; id: string }) => Promise.resolve(input.userId === 'u1' ? notification : undefined));
    const hub = new NotificationHub();
    const seen: LiveEvent[] = [];
    hub.subscribe('u1', (e) => seen.push(e));
    const listener = listenForProactiveEvents({ proactiveEvents: feed, notifications: { get } as never, reminders: { get: () => Promise.resolve(undefined) } as never }, hub);

    await deliver({ type: 'notification', userId: 'u1', id: 'n1', seq: 4 });
    await deliver({ type: 'notification', userId: 'u2', id: 'n9', seq: 1 });
    expect(seen).toEqual([{ event: 'notification', id: '4', notification }]);
    // Nobody listens for u2: nothing was read for them.
    expect(get).toHaveBeenCalledTimes(1);
    await listener.close();
    expect(close).toHaveBeenCalledOnce();
  });
});
