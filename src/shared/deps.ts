import type { RuleWork } from './rule-work';
import type { EpisodeVectorIndex } from '../core/episodes/ports';
import type { GraphRecallSource } from '../core/recall/graph';
import type { MemoryListsSource, WorkingSets } from '../core/recall/memory-lists';
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
 * The ports every capability writes or runs through: the unit of work (the kernel's transaction
 * port, handing out the repositories that commit together) and where rule work runs.
 */
export interface SharedPorts {
  /** Transactions (per-user locked or not) handing out the repositories that write together. */
  unitOfWork: UnitOfWork;
  /**
   * Where the CPU-heavy rule work runs, with a time limit per task: extraction's rules and the
   * segmentation of appended messages for conversation search (the worker pool,
   * src/adapters/extraction/rule-pool.ts). Required, so no process that serves users segments a
   * batch on its event loop by omission; unit tests give `inlineRuleWork`.
   */
  rules: RuleWork;
}

/** Account's ports (src/account): settings, the users' registry, page sign-ins and per-user API keys. */
export interface AccountPorts {
  settings: SettingsRepository;
  users: UserRepository;
  /** Used memory-page sign-in codes and signed-out sessions. */
  pageTokens: PageTokenRepository;
  /** Per-user API keys (mint, list, revoke, authenticate). */
  userApiKeys: UserApiKeyRepository;
  /** Keyed MACs (the purge audit's user ref a page sign-in checks); absent in production until SECRET_KEY is configured. */
  secrets: ServiceSecrets;
}

/** Lifecycle's ports (src/lifecycle): what the sweeps reach beyond the unit of work. */
export interface LifecyclePorts {
  /** The retention sweep's way to the vectors of the messages it deletes (the conversation's exchange vectors). */
  messageVectorEraser: MessageVectorEraser;
}

/**
 * Memory's ports (src/memory): the memories, their audit trail, vectors and outbox, and the one
 * embedder — which recall, episodes and the exchange index use too, memory being the owner.
 */
export interface MemoryPorts {
  /** Memory-side reads outside any transaction. Writes go through `unitOfWork`. */
  memories: MemoryReader & MemorySearch;
  memoryEvents: MemoryEventLog;
  timeRoute: MemoryTimeRoute;
  vectorOutbox: VectorOutbox;
  /** The vector outbox as the scheduled drain retries it. */
  outboxRetries: OutboxRetryRepository;
  /**
   * The one embedder: queries and documents, on the interactive or the background lane. The
   * LangChain model behind it (and its query cache) stays inside src/adapters/embeddings.
   */
  embedder: Embedder;
  vectors: VectorIndex;
  /** The LLM conflict resolver (present when an LLM is configured and CONFLICT_RESOLVER is not "rules"). */
  conflictJudge?: ConflictJudge;
  /**
   * Extraction's provenance screen (the conversation's `screenCandidates`, wired in src/runtime.ts),
   * which a direct write (memory, below conversation) runs before anything is durable.
   */
  provenanceScreen: ProvenanceScreen;
}

/** Persona's ports (src/persona): the users' profiles and scene indexes, and what condenses them. */
export interface PersonaPorts {
  /** The users' personas (`user_profiles`); without it recall injects none. */
  personas?: PersonaStore;
  /** The users' scene indexes (`user_scenes`, read path L2); without it recall injects no navigation block. */
  scenes?: SceneStore;
  /** Present when an LLM is configured and PERSONA_BUILDER=auto: condenses the template persona. */
  personaCondenser?: PersonaCondenser;
}

/** Proactive's ports (src/proactive): reminders, notifications, digests and what they weigh. */
export interface ProactivePorts {
  reminders: ReminderRepository;
  notifications: NotificationRepository;
  digests: DigestRepository;
  proactiveMemories: ProactiveMemorySource;
  /** Present when an LLM is configured: words the daily digest (the template otherwise). */
  digestModel?: DigestModel;
}

/**
 * Conversation's ports (src/conversation): messages and their search, extraction and its runs and
 * quarantine, and what conversations become — episodes and the exchange index — which recall,
 * lifecycle and privacy read.
 */
export interface ConversationPorts {
  conversations: ConversationRepository;
  /** Extraction watermarks and the leased per-page extractor output. */
  extractionRuns: ExtractionRunRepository;
  extractor: Extractor;
  /** Messages whose rule work failed or timed out, held out of extraction (docs/write-path.md#quarantine). */
  quarantine?: MessageQuarantine;
  /** The user's raw messages searched (BM25, dates, neighbours, hidden lines). */
  messageSearch: MessageSearch;
  /** Episodes (one conversation, one local day) and their postings. */
  episodes: EpisodeStore;
  /** Episode summaries' vectors (`${CHROMA_COLLECTION}_episodes`); without it episodes are found by keywords and dates only. */
  episodeVectors?: EpisodeVectorIndex;
  /** Raw exchanges' vectors (`${CHROMA_COLLECTION}_exchanges`); without it conversation search has no exchange_ann route. */
  exchangeVectors?: ExchangeVectorIndex;
  /** How far each conversation is in `exchangeVectors` (the exchange indexer's watermark). */
  exchangeIndex?: ExchangeIndexWatermarks;
}

/** Recall's own ports (src/recall): the optional query rewriter and the one-statement reads it may take. */
export interface RecallPorts {
  /** Present when an LLM is configured; recall uses it only when a request or RECALL_QUERY_REWRITE asks. */
  queryRewriter?: QueryRewriter;
  /** Seed 003's entity graph as recall walks it; without it recall has no graph route. */
  graphRecall?: GraphRecallSource;
  /** Recall's importance, type and instruction lists in one statement; without it recall reads them through `memories`, one query each. */
  recallLists?: MemoryListsSource;
  /** The working sets of users chatting now, held by this process; without it every recall reads through `recallLists` and `memories`. */
  workingSets?: WorkingSets;
}

/** Privacy's ports (src/privacy): the export's snapshots, the purge's audit and its crypto-shredding. */
export interface PrivacyPorts {
  /** Consistent snapshots of everything stored about a user, for the export. */
  exports: UserExportSource;
  purgeAudit: PurgeAuditLog;
  /** Crypto-shredding of a user's payload key at the end of a purge (set by the payload codec). */
  userKeyDestroyer?: UserKeyDestroyer;
}

/**
 * Everything the services and activities need, wired once by the worker / API entry points: the
 * capabilities' slices above, each port in the slice of the capability that owns it, plus the
 * configuration. A use case takes the slice it reads (`MemoryPorts`, …), one named next to it
 * (`RecallDeps`, `EpisodicDeps`, `WriterDeps`, `EpisodeWriterDeps`, `PurgeDeps`, …), or a short
 * `Pick` of this. No raw pool and no LangChain model: use cases reach PostgreSQL through the ports
 * and the embeddings model through `embedder`. test/deps-slices.test.ts keeps every key in
 * exactly one slice.
 */
export interface ServiceDeps extends SharedPorts, AccountPorts, LifecyclePorts, MemoryPorts, PersonaPorts, ProactivePorts, ConversationPorts, RecallPorts, PrivacyPorts {
  config: Pick<AppConfig, 'extraction' | 'embedder' | 'recall' | 'llm' | 'proactive' | 'lifecycle' | 'retention' | 'reliability'>;
}
