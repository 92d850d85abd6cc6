import type pg from 'pg';
import { expect } from 'vitest';
import { PostgresWorkingSetSource } from '../../src/adapters/postgres/working-set-repository';
import type { RecallDeps } from '../../src/recall/recall';
import { WorkingSetCache } from '../../src/recall/working-set-cache';

/**
 * The recall deps reading through a fresh working-set cache once it holds `userId` (recalled twice,
 * then waited for), and the same deps reading only through SQL: the two readers the working-set
 * tests compare.
 */
export async function heldAndSql(deps: RecallDeps, pool: pg.Pool, userId: string, now: Date): Promise<{ held: RecallDeps; sql: RecallDeps; cache: WorkingSetCache }> {
  const cache = new WorkingSetCache(new PostgresWorkingSetSource(pool), { maxMemories: 10_000 });
  const held: RecallDeps = { ...deps, workingSets: cache };
  const sql: RecallDeps = { ...deps, workingSets: undefined };
  const fallback = { lists: deps.recallLists!, memories: deps.memories };
  cache.forRequest(userId, now, fallback);
  cache.forRequest(userId, now, fallback);
  await until(() => cache.isHeld(userId));
  return { held, sql, cache };
}

/** Waits up to ten seconds for `done`, then asserts it. */
export async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(done()).toBe(true);
}
