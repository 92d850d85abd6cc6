import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { signalRecalled } from '../src/memory/reinforcement-signal';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';

// Every recall hands its ids to the reinforcement workflow without awaiting it. With Temporal hung
// (not refusing), a hand-over without a deadline stays open for good: one per recall, piling up
// in a process that serves recalls for as long as the hang lasts.

let proxy: FaultProxy | undefined;
let connection: Connection | undefined;
afterAll(async () => {
  await connection?.close();
  await proxy?.close();
});

describe('recall reinforcement hand-over', () => {
  it('gives up within its deadline when Temporal hangs, and works again after', async () => {
    proxy = await startFaultProxy(inject('stack').temporalAddress);
    connection = await Connection.connect({ address: proxy.address });
    const temporal = new Client({ connection, namespace: 'default' });
    const handOver = (callTimeoutMs: number) =>
      new Promise<{ failed: boolean; ms: number }>((resolve) => {
        const started = Date.now();
        signalRecalled(temporal, `signal-deadline-${Date.now()}`, `signal-deadline-${process.pid}`, ['m1'], new Date(), 3600, () => resolve({ failed: true, ms: Date.now() - started }), callTimeoutMs);
        // The hand-over reports only failures; a success shows as the silence after a healthy call.
        setTimeout(() => resolve({ failed: false, ms: Date.now() - started }), callTimeoutMs + 4000).unref();
      });

    expect((await handOver(1000)).failed).toBe(false);
    proxy.hang();
    const hung = await handOver(1000);
    expect(hung.failed).toBe(true);
    expect(hung.ms).toBeLessThan(4000);
    await proxy.restore();
  });
});
