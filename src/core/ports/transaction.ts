/** Ports of the unit of work and the repositories it hands one transaction (src/core/ports.ts re-exports every port). */
import type { MemoryEventLog, MemoryGraph, MemoryRepository } from './memory';
import type { LifecycleRepository } from './lifecycle';
import type { ConversationRepository, ExtractionWatermarks } from './conversation';
import type { NotificationRepository, ReminderRepository, SettingsRepository } from './proactive';
import type { MemoryErasure, RetentionRepository, UserRowPurge } from './privacy';

/** The repositories a {@link UnitOfWork} hands its work, all bound to the one transaction. */
export interface MemoryTransaction {
  /** Conversation side: what commits together with a message append, a reminder or a notification. */
  conversations: ConversationRepository;
  reminders: ReminderRepository;
  notifications: NotificationRepository;
  settings: SettingsRepository;
  memories: MemoryRepository;
  events: MemoryEventLog;
  graph: MemoryGraph;
  lifecycle: LifecycleRepository;
  erasure: MemoryErasure;
  purge: UserRowPurge;
  retention: RetentionRepository;
  /** Extraction watermarks (docs/reliability.md): moved in the transaction of the decision that covers them. */
  watermarks: ExtractionWatermarks;
}

/**
 * Runs work in one transaction: everything commits together or nothing does (any error rolls
 * back and is rethrown).
 */
export interface UnitOfWork {
  /**
   * Under the user's write lock: writes for one user are serialised (two extractions cannot both
   * create the same fact or lose a supersede) while users stay parallel.
   */
  forUser<T>(input: { userId: string; work: (tx: MemoryTransaction) => Promise<T> }): Promise<T>;
  /** Without a user lock: the lifecycle jobs' pages, which lock the rows they change themselves. */
  run<T>(input: { work: (tx: MemoryTransaction) => Promise<T> }): Promise<T>;
}
