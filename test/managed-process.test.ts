import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startProcess } from '../src/stack/managed-process';

// A child that, like PostgreSQL, treats SIGINT as "stop now" (exit 0) and would otherwise be
// killed by the signal: which one stop() sends shows in how the child ended.
const CHILD = "process.on('SIGINT', () => process.exit(0)); console.log('ready'); setInterval(() => {}, 1000);";

describe('managed processes', () => {
  it('stop with the process’s own stop signal (PostgreSQL: SIGINT, its fast shutdown)', async () => {
    const proc = startProcess('fast', process.execPath, ['-e', CHILD], join(tmpdir(), `managed-${process.pid}.log`), { stopSignal: 'SIGINT' });
    await new Promise((resolve) => proc.child.stdout!.once('data', resolve));
    await proc.stop();
    expect(proc.child.exitCode).toBe(0);
    expect(proc.child.signalCode).toBeNull();
  });

  it('stop with SIGTERM by default', async () => {
    const proc = startProcess('plain', process.execPath, ['-e', CHILD], join(tmpdir(), `managed-${process.pid}.log`));
    await new Promise((resolve) => proc.child.stdout!.once('data', resolve));
    await proc.stop();
    expect(proc.child.signalCode).toBe('SIGTERM');
  });
});
