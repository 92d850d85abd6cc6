import { Client, Connection } from '@temporalio/client';
import { temporalCallInterceptors } from '../src/stack/temporal-connection';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { signalRecalled } from '../src/memory/reinforcement-signal';
import { signalRecallHits } from '../src/proactive/recall-nudge-signal';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';

// Every recall hands its ids to the reinforcement and recall-nudge workflows without awaiting it. With Temporal hung
// (not refusing), a hand-over without a deadline stays open for good: one per recall, piling up
// in a process that serves recalls for as long as the hang lasts.

let proxy: FaultProxy | undefined;
let connection: Connection | undefined;
afterAll(async () => {
  await connection?.close();
  await proxy?.close();
});

describe('the hand-overs after a recall', () => {
  it('give up within their deadline when Temporal hangs', async () => {
    proxy = await startFaultProxy(inject('stack').temporalAddress);
    connection = await Connection.connect({ address: proxy.address, interceptors: temporalCallInterceptors() });
    const temporal = new Client({ connection, namespace: 'default' });
    const user = `signal-deadline-${process.pid}`;
    const handOver = (callTimeoutMs: number) =>
      new Promise<{ failures: number; ms: number }>((resolve) => {
        const started = Date.now();
        let failures = 0;
        const failed = () => {
          failures += 1;
          if (failures === 2) resolve({ failures, ms: Date.now() - started });
        };
        signalRecalled(temporal, `signal-deadline-${Date.now()}`, user, ['m1'], new Date(), 3600, failed, callTimeoutMs);
        signalRecallHits(temporal, `signal-deadline-${Date.now()}`, user, ['m1'], new Date(), failed, callTimeoutMs);
        // The hand-over reports only failures; a success shows as the silence after a healthy call.
        setTimeout(() => resolve({ failures, ms: Date.now() - started }), callTimeoutMs + 4000).unref();
      });

    expect((await handOver(1000)).failures).toBe(0);
    proxy.hang();
    const hung = await handOver(1000);
    expect(hung.failures).toBe(2);
    expect(hung.ms).toBeLessThan(4000);
    await proxy.restore();
  });
});
