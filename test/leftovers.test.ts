import { describe, expect, it } from 'vitest';
import { leftoversOf, type ProcInfo } from '../src/stack/leftovers';

// Which processes a new `npm run dev` may stop: only the servers of its own data directories.
const ours = '/home/me/jarvis/.data/postgres';
const procs: ProcInfo[] = [
  { pid: 10, comm: 'postgres', cwd: ours, args: ['/usr/lib/postgresql/18/bin/postgres', '-D', ours, '-p', '5433'] },
  { pid: 11, comm: 'postgres', cwd: ours, args: ['postgres: postgres jarvis 127.0.0.1(5000) SELECT'] },
  { pid: 12, comm: 'postgres', cwd: '/srv/other-stack/data/postgres', args: ['postgres: checkpointer'] },
  { pid: 13, comm: 'postgres', cwd: '/', args: ['/usr/bin/postgres', '-D', '/home/me/jarvis/.data/postgres-old'] },
  { pid: 14, comm: 'bash', cwd: ours, args: ['bash'] },
  { pid: 15, comm: 'postgres', cwd: '/home/me/jarvis', args: ['postgres', '-D', '.data/postgres'] },
  { pid: 20, comm: 'temporal', cwd: '/home/me/jarvis', args: ['temporal', 'server', 'start-dev', '--db-filename', '/home/me/jarvis/.data/temporal/temporal.db'] },
  { pid: 21, comm: 'temporal', cwd: '/home/me/jarvis', args: ['temporal', 'server', 'start-dev', '--db-filename=/srv/other/temporal.db'] },
  { pid: 30, comm: 'chroma', cwd: '/home/me/jarvis', args: ['python3', 'chroma', 'run', '--path', '.data/chroma'] },
  { pid: 31, comm: 'tail', cwd: '/home/me/jarvis', args: ['tail', '-f', '.data/chroma/log'] },
];

describe('leftovers of an earlier run', () => {
  it('picks our postmaster and its orphaned backends, by -D or by cwd, and no other postgres', () => {
    expect(leftoversOf(procs, { comm: 'postgres', dir: ours, byCwd: true }).map((p) => p.pid)).toEqual([10, 11, 15]);
  });

  it('does not pick a process that merely sits in our data directory', () => {
    expect(leftoversOf(procs, { comm: 'bash', dir: ours }).map((p) => p.pid)).toEqual([]);
    expect(leftoversOf(procs, { comm: 'postgres', dir: ours }).map((p) => p.pid)).toEqual([10, 15]);
  });

  it('picks Temporal and Chroma by the data path in their arguments, relative ones against their cwd', () => {
    expect(leftoversOf(procs, { comm: 'temporal', dir: '/home/me/jarvis/.data/temporal' }).map((p) => p.pid)).toEqual([20]);
    expect(leftoversOf(procs, { comm: 'chroma', dir: '/home/me/jarvis/.data/chroma' }).map((p) => p.pid)).toEqual([30]);
  });
});
