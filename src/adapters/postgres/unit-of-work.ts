import type pg from 'pg';
import type { MemoryTransaction, UnitOfWork } from '../../core/ports';
import { PostgresMemoryErasure } from './erase-repository';
import { PostgresMemoryEventLog } from './event-repository';
import { PostgresMemoryGraph } from './graph-repository';
import { PostgresLifecycleRepository } from './lifecycle-repository';
import { PostgresMemoryRepository } from './memory-repository';
import { inTransaction, inUserTransaction, type Queryable } from './pool';
import { PostgresUserRowPurge } from './purge-repository';
import { PostgresRetentionRepository } from './retention-repository';

/** The memory repositories bound to one transaction's client. */
function repositoriesOf(client: Queryable): MemoryTransaction {
  return {
    memories: new PostgresMemoryRepository(client),
    events: new PostgresMemoryEventLog(client),
    graph: new PostgresMemoryGraph(client),
    lifecycle: new PostgresLifecycleRepository(client),
    erasure: new PostgresMemoryErasure(client),
    purge: new PostgresUserRowPurge(client),
    retention: new PostgresRetentionRepository(client),
  };
}

/**
 * PostgreSQL transactions over the injected pool: the work gets repositories bound to the
 * transaction's client; `forUser` also takes the user's advisory lock (see inUserTransaction).
 */
export class PostgresUnitOfWork implements UnitOfWork {
  constructor(private readonly pool: pg.Pool) {}

  forUser<T>({ userId, work }: { userId: string; work: (tx: MemoryTransaction) => Promise<T> }): Promise<T> {
    return inUserTransaction(this.pool, userId, (client) => work(repositoriesOf(client)));
  }

  run<T>({ work }: { work: (tx: MemoryTransaction) => Promise<T> }): Promise<T> {
    return inTransaction(this.pool, (client) => work(repositoriesOf(client)));
  }
}
