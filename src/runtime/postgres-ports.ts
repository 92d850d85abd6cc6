import type pg from 'pg';
import { PostgresConversationRepository } from '../adapters/postgres/conversation-repository';
import { PostgresRecallLists } from '../adapters/postgres/recall-lists-repository';
import { PostgresDigestRepository, PostgresProactiveMemorySource } from '../adapters/postgres/digest-repository';
import { PostgresMemoryEventLog } from '../adapters/postgres/event-repository';
import { PostgresExtractionRunRepository } from '../adapters/postgres/extraction-run-repository';
import { PostgresUserExportSource } from '../adapters/postgres/export-repository';
import { PostgresMemoryRepository } from '../adapters/postgres/memory-repository';
import { PostgresMessageSearch } from '../adapters/postgres/message-search-repository';
import { PostgresEpisodeStore } from '../adapters/postgres/episode-repository';
import { PostgresExchangeIndexWatermarks } from '../adapters/postgres/exchange-index-repository';
import { PostgresNotificationRepository } from '../adapters/postgres/notification-repository';
import { PostgresVectorOutbox } from '../adapters/postgres/outbox-repository';
import { PostgresOutboxRetryRepository } from '../adapters/postgres/outbox-retry-repository';
import { PostgresPageTokenRepository } from '../adapters/postgres/page-token-repository';
import { PostgresUserApiKeyRepository } from '../adapters/postgres/user-key-repository';
import { PostgresPurgeAuditLog } from '../adapters/postgres/purge-repository';
import { PostgresReminderRepository } from '../adapters/postgres/reminder-repository';
import { PostgresSettingsRepository } from '../adapters/postgres/settings-repository';
import { PostgresTimeRoute } from '../adapters/postgres/time-route-repository';
import { PostgresGraphRecall } from '../adapters/postgres/graph-recall-repository';
import { PostgresUnitOfWork } from '../adapters/postgres/unit-of-work';
import { PostgresUserRepository } from '../adapters/postgres/user-repository';
import { PostgresSceneStore } from '../adapters/postgres/scene-repository';
import { PostgresPersonaStore } from '../adapters/postgres/persona-repository';
import type { ServiceDeps } from '../shared/deps';

export type PostgresPorts = 'memories' | 'memoryEvents' | 'timeRoute' | 'vectorOutbox' | 'unitOfWork' | 'purgeAudit' | 'conversations' | 'reminders' | 'notifications' | 'settings' | 'users' | 'digests' | 'proactiveMemories' | 'extractionRuns' | 'outboxRetries' | 'pageTokens' | 'userApiKeys' | 'exports' | 'messageSearch' | 'episodes' | 'exchangeIndex' | 'personas' | 'scenes' | 'graphRecall' | 'recallLists';

/** The PostgreSQL adapters of the ports (src/core/ports.ts), around the one pool. */
export function postgresPorts(pool: pg.Pool): Pick<ServiceDeps, PostgresPorts> {
  return {
    conversations: new PostgresConversationRepository(pool),
    reminders: new PostgresReminderRepository(pool),
    notifications: new PostgresNotificationRepository(pool),
    settings: new PostgresSettingsRepository(pool),
    users: new PostgresUserRepository(pool),
    digests: new PostgresDigestRepository(pool),
    proactiveMemories: new PostgresProactiveMemorySource(pool),
    extractionRuns: new PostgresExtractionRunRepository(pool),
    outboxRetries: new PostgresOutboxRetryRepository(pool),
    pageTokens: new PostgresPageTokenRepository(pool),
    userApiKeys: new PostgresUserApiKeyRepository(pool),
    exports: new PostgresUserExportSource(pool),
    personas: new PostgresPersonaStore(pool),
    scenes: new PostgresSceneStore(pool),
    memories: new PostgresMemoryRepository(pool),
    memoryEvents: new PostgresMemoryEventLog(pool),
    timeRoute: new PostgresTimeRoute(pool),
    graphRecall: new PostgresGraphRecall(pool),
    recallLists: new PostgresRecallLists(pool),
    vectorOutbox: new PostgresVectorOutbox(pool),
    unitOfWork: new PostgresUnitOfWork(pool),
    purgeAudit: new PostgresPurgeAuditLog(pool),
    messageSearch: new PostgresMessageSearch(pool),
    episodes: new PostgresEpisodeStore(pool),
    exchangeIndex: new PostgresExchangeIndexWatermarks(pool),
  };
}
