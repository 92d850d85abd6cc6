import type { RuleWork } from './rule-work';
import type { EpisodeVectorIndex } from '../core/episodes/ports';
import type { GraphRecallSource } from '../core/recall/graph';
import type { MemoryListsSource } from '../core/recall/memory-lists';
import type { ConflictJudge, Embedder, MemoryEventLog, MemoryReader, MemorySearch, MemoryTimeRoute, OutboxRetryRepository, VectorIndex, VectorOutbox } from '../core/ports/memory';
import type { ConversationRepository, ExtractionRunRepository, Extractor, MessageQuarantine } from '../core/ports/conversation';
import type { EpisodeStore, ExchangeIndexWatermarks, ExchangeVectorIndex, MessageSearch, QueryRewriter } from '../core/ports/recall';
import type { DigestModel, DigestRepository, NotificationRepository, PageTokenRepository, ProactiveMemorySource, ReminderRepository, SettingsRepository, UserRepository } from '../core/ports/proactive';
import type { PurgeAuditLog, UserKeyDestroyer, UserExportSource } from '../core/ports/privacy';
import type { UserApiKeyRepository } from '../core/ports/account';
import type { UnitOfWork } from '../core/ports/transaction';
import type { MessageVectorEraser } from '../core/ports/lifecycle';
import type { PersonaCondenser, PersonaStore, SceneStore } from '../core/persona/ports';
import type { ProvenanceScreen } from '../core/memory/direct-write';
import type { ServiceSecrets } from '../security/secrets';
import type { AppConfig } from '../config';

/**
 * Everything the services and activities need, wired once by the worker / API entry points. A use
 * case takes the slice it reads, named next to it (`RecallDeps`, `EpisodicDeps`, `WriterDeps`,
 * `EpisodeWriterDeps`, `PurgeDeps`, …), or a short `Pick` of this. No raw pool and no LangChain model:
 * use cases reach PostgreSQL through the ports and the embeddings model through `embedder`.
 */
export interface ServiceDeps {
  /** Memory-side ports (src/core/ports.ts), read outside any transaction. Writes go through `unitOfWork`. */
  memories: MemoryReader & MemorySearch;
  memoryEvents: MemoryEventLog;
  timeRoute: MemoryTimeRoute;
  vectorOutbox: VectorOutbox;
  /** Transactions (per-user locked or not) handing out the repositories that write together. */
  unitOfWork: UnitOfWork;
  /** Conversation-side ports (src/core/ports.ts), outside any transaction. */
  conversations: ConversationRepository;
  reminders: ReminderRepository;
  notifications: NotificationRepository;
  settings: SettingsRepository;
  users: UserRepository;
  digests: DigestRepository;
  proactiveMemories: ProactiveMemorySource;
  /** Extraction watermarks and the leased per-page extractor output. */
  extractionRuns: ExtractionRunRepository;
  /** The vector outbox as the scheduled drain retries it. */
  outboxRetries: OutboxRetryRepository;
  /** Used memory-page sign-in codes and signed-out sessions. */
  pageTokens: PageTokenRepository;
  /** Consistent snapshots of everything stored about a user, for the export. */
  exports: UserExportSource;
  purgeAudit: PurgeAuditLog;
  /** Per-user API keys (mint, list, revoke, authenticate). */
  userApiKeys: UserApiKeyRepository;
  /** The user's raw messages searched (BM25, dates, neighbours, hidden lines). */
  messageSearch: MessageSearch;
  /** Episodes (one conversation, one local day) and their postings. */
  episodes: EpisodeStore;
  /**
   * The one embedder: queries and documents, on the interactive or the background lane. The
   * LangChain model behind it (and its query cache) stays inside src/adapters/embeddings.
   */
  embedder: Embedder;
  vectors: VectorIndex;
  /** Episode summaries' vectors (`${CHROMA_COLLECTION}_episodes`); without it episodes are found by keywords and dates only. */
  episodeVectors?: EpisodeVectorIndex;
  /** Raw exchanges' vectors (`${CHROMA_COLLECTION}_exchanges`); without it conversation search has no exchange_ann route. */
  exchangeVectors?: ExchangeVectorIndex;
  /** How far each conversation is in `exchangeVectors` (the exchange indexer's watermark). */
  exchangeIndex?: ExchangeIndexWatermarks;
  /** The retention sweep's way to the vectors of the messages it deletes (the conversation's exchange vectors). */
  messageVectorEraser: MessageVectorEraser;
  extractor: Extractor;
  /**
   * Extraction's provenance screen (the conversation's `screenCandidates`, wired in src/runtime.ts),
   * which a direct write (memory, below conversation) runs before anything is durable.
   */
  provenanceScreen: ProvenanceScreen;
  /**
   * Where the CPU-heavy rule work of extraction runs, with a time limit per message (the worker
   * pool, src/adapters/extraction/rule-pool.ts); without it, inline on the caller's thread.
   */
  rules?: RuleWork;
  /** Messages whose rule work failed or timed out, held out of extraction (docs/write-path.md#quarantine). */
  quarantine?: MessageQuarantine;
  /** Present when an LLM is configured; recall uses it only when a request or RECALL_QUERY_REWRITE asks. */
  queryRewriter?: QueryRewriter;
  /** Present when an LLM is configured: words the daily digest (the template otherwise). */
  digestModel?: DigestModel;
  /** The LLM conflict resolver (present when an LLM is configured and CONFLICT_RESOLVER is not "rules"). */
  conflictJudge?: ConflictJudge;
  /** Seed 003's entity graph as recall walks it; without it recall has no graph route. */
  graphRecall?: GraphRecallSource;
  /** Recall's importance, type and instruction lists in one statement; without it recall reads them through `memories`, one query each. */
  recallLists?: MemoryListsSource;
  /** The users' personas (`user_profiles`); without it recall injects none. */
  personas?: PersonaStore;
  /** The users' scene indexes (`user_scenes`, read path L2); without it recall injects no navigation block. */
  scenes?: SceneStore;
  /** Present when an LLM is configured and PERSONA_BUILDER=auto: condenses the template persona. */
  personaCondenser?: PersonaCondenser;
  /** Keyed MACs (the purge audit's user ref); absent in production until SECRET_KEY is configured. */
  secrets: ServiceSecrets;
  /** Crypto-shredding of a user's payload key at the end of a purge (set by the payload codec). */
  userKeyDestroyer?: UserKeyDestroyer;
  config: Pick<AppConfig, 'extraction' | 'embedder' | 'recall' | 'llm' | 'proactive' | 'lifecycle' | 'retention' | 'reliability'>;
}
