import type pg from 'pg';
import type { MemoryTransaction, UnitOfWork } from '../../core/ports/transaction';
import { PostgresConversationRepository } from './conversation-repository';
import { PostgresMemoryErasure } from './erase-repository';
import { PostgresMemoryEventLog } from './event-repository';
import { PostgresExtractionRunRepository } from './extraction-run-repository';
import { PostgresMemoryGraph } from './graph-repository';
import { PostgresLifecycleRepository } from './lifecycle-repository';
import { PostgresMemoryRepository } from './memory-repository';
import { PostgresNotificationRepository } from './notification-repository';
import { inTransaction, inUserTransaction, type Queryable } from './pool';
import { PostgresUserRowPurge } from './purge-repository';
import { PostgresReminderRepository } from './reminder-repository';
import { PostgresRetentionRepository } from './retention-repository';
import { PostgresSettingsRepository } from './settings-repository';

/** The repositories bound to one transaction's client. */
function repositoriesOf(client: Queryable): MemoryTransaction {
  return {
    conversations: new PostgresConversationRepository(client),
    reminders: new PostgresReminderRepository(client),
    notifications: new PostgresNotificationRepository(client),
    settings: new PostgresSettingsRepository(client),
    memories: new PostgresMemoryRepository(client),
    events: new PostgresMemoryEventLog(client),
    graph: new PostgresMemoryGraph(client),
    lifecycle: new PostgresLifecycleRepository(client),
    erasure: new PostgresMemoryErasure(client),
    purge: new PostgresUserRowPurge(client),
    retention: new PostgresRetentionRepository(client),
    watermarks: new PostgresExtractionRunRepository(client),
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
