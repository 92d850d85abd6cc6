/** Ports of reminders, notifications, settings, digests and page tokens (src/core/ports.ts re-exports every port). */
import type { ImportanceLevel } from '../types';
import type { ClockTime, ProactiveSettings, UserSettings } from '../user-settings';

/** A reminder's status (the state machine of src/core/proactive/reminder-state.ts moves it). */
export const ReminderStatus = {
  scheduled: 'scheduled',
  snoozed: 'snoozed',
  fired: 'fired',
  dismissed: 'dismissed',
  cancelled: 'cancelled',
} as const;
export type ReminderStatus = (typeof ReminderStatus)[keyof typeof ReminderStatus];
export const REMINDER_STATUSES = Object.values(ReminderStatus) as [ReminderStatus, ...ReminderStatus[]];

/** Where a reminder came from: the API, or a user message in a conversation. */
export interface ReminderSource {
  via: 'api' | 'conversation';
  conversationId?: string;
  messageId?: string;
  /** The recognised words ("明天下午三点…提醒我"), kept for the audit. */
  matched?: string;
  requestId?: string;
  /**
   * The instant a create with a `requestId` asked for, before a rule moved it: a retry is compared
   * with it (the row's own due time moves as a series goes on). Not shown to clients.
   */
  requestedDueAt?: string;
}

/** What the workflow's stateQuery returns and what the reminders table mirrors (ISO times). */
export interface ReminderState {
  reminderId: string;
  status: ReminderStatus;
  /** When this occurrence is (or was) due; a reschedule moves it. */
  dueAt: string;
  /** 1 for the first occurrence; recurring reminders count up across continue-as-new. */
  occurrence: number;
  /** How many times this occurrence has fired (a snooze fires it again). */
  fireCount: number;
  /** How many times "稍后" moved this occurrence. */
  snoozeCount: number;
  /**
   * The workflow's change counter for this reminder: +1 for every state change, carried across a
   * series' occurrences (continue-as-new), never reset. The reminders row only moves to a higher
   * version, so a late or retried write of an older state cannot overwrite a newer one.
   */
  version: number;
  firedAt?: string;
  snoozedUntil?: string;
  dismissedAt?: string;
  cancelledAt?: string;
}

/** What a digest says, section by section (src/core/proactive/digest-content.ts builds it). */
export interface DigestSections {
  date: string;
  timeZone: string;
  lang: 'zh' | 'en';
  conversations: { count: number; messages: number; topics: string[]; highlights: string[] };
  importantMemories: { id: string; text: string; type: string; importanceLevel: string }[];
  /** Memories whose importance rose into the escalation band since they were last surfaced (M.1); absent in digests written before. */
  escalatedMemories?: { id: string; text: string; type: string; fromLevel: string; toLevel: string; score: number; causeEventIds: string[] }[];
  openQuestions: { conversationId: string; text: string; at: string }[];
  suggestions: string[];
}

/** A reminder as its workflow last recorded it. */
export interface ReminderRecord {
  id: string;
  userId: string;
  text: string;
  status: ReminderStatus;
  dueAt: Date;
  timeZone: string;
  rrule: string | null;
  seriesStart: Date | null;
  assumedTime: boolean;
  occurrence: number;
  firedAt: Date | null;
  snoozedUntil: Date | null;
  dismissedAt: Date | null;
  fireCount: number;
  snoozeCount: number;
  /** The workflow's change counter this row mirrors (see ReminderState.version). */
  version: number;
  source: ReminderSource;
  workflowId: string;
  createdAt: Date;
  updatedAt: Date;
}

export type NewReminder = Pick<ReminderRecord, 'id' | 'userId' | 'text' | 'dueAt' | 'timeZone' | 'rrule' | 'seriesStart' | 'assumedTime' | 'source' | 'workflowId'>;

/** Reminders as their workflows last recorded them; every call is scoped by user. */
export interface ReminderRepository {
  /** Inserts the reminder unless it exists; the stored row and whether this call created it. */
  insert(input: { reminder: NewReminder; at: Date }): Promise<{ reminder: ReminderRecord; created: boolean }>;
  /**
   * Mirrors the workflow's state, only over an older version: a write that arrives late (an
   * activity that timed out but still ran, a retry after a newer write) changes nothing. A state
   * without a version (scheduled by a worker from before versioning) only applies while no
   * versioned write has happened. The row when this write applied, undefined otherwise.
   */
  applyState(input: { userId: string; state: ReminderState; at: Date }): Promise<ReminderRecord | undefined>;
  /**
   * A recurring reminder's next occurrence replaces the previous one's state, once: only a row
   * still on an earlier occurrence changes. Its version is one above the row's (at least the
   * state's), so every write of the previous run is older.
   */
  startOccurrence(input: { userId: string; state: ReminderState; at: Date }): Promise<ReminderRecord | undefined>;
  get(input: { userId: string; id: string }): Promise<ReminderRecord | undefined>;
  /** Newest due first. */
  list(input: { userId: string; status?: ReminderStatus; limit: number }): Promise<ReminderRecord[]>;
  /** Open reminders next due in [from, to): scheduled ones by due time, snoozed ones by snooze end. */
  dueBetween(input: { userId: string; from: Date; to: Date }): Promise<ReminderRecord[]>;
  remove(input: { userId: string; id: string }): Promise<void>;
  /**
   * Open reminders whose workflow was never seen to start, created before `createdBefore` — across
   * users (the reminder reconciler's scan); each row carries its own user. Rows never tried come
   * first (oldest first), then those whose start failed, least recently failed first.
   */
  unstarted(input: { createdBefore: Date; limit: number }): Promise<ReminderRecord[]>;
  /** Whether the reminder's workflow was never seen to start (false for a row that does not exist). */
  neverStarted(input: { userId: string; id: string }): Promise<boolean>;
  /** Records that the reminder's workflow exists (the first time only). */
  markWorkflowStarted(input: { userId: string; id: string; at: Date }): Promise<void>;
  /** Records a failed start, which sends the row behind the rows not yet tried. */
  markWorkflowStartFailed(input: { userId: string; id: string; at: Date; error: string }): Promise<void>;
}

export type NotificationKind = 'reminder' | 'digest' | 'nudge';

export interface NotificationRecord {
  id: string;
  seq: number;
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  reminderId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
  readAt: Date | null;
}

export interface NewNotification {
  id: string;
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  reminderId?: string;
  data?: Record<string, unknown>;
  /** The same key never stores (or pushes) a second notification. */
  idempotencyKey: string;
}

/** Events announced to every API process: ids only, the listener reads the rows (scoped by user). */
/** A chat model as the digest writer asks it: a system prompt and one data block in, the reply's text out. */
export interface DigestModel {
  reply(system: string, data: string): Promise<string>;
}

/**
 * The PostgreSQL channel that carries "something new for user X" from workers to API processes:
 * the notification repository NOTIFYs on it, the event feed (src/adapters/postgres/proactive-listener.ts) LISTENs.
 */
export const PROACTIVE_CHANNEL = 'jarvis_proactive';

export type ProactiveEvent =
  | { type: 'notification'; userId: string; id: string; seq: number }
  | { type: 'reminder'; userId: string; reminderId: string; status: string };

/**
 * The announcements of proactive events as they are made, in any process (the NOTIFYs on
 * {@link PROACTIVE_CHANNEL} in production). Best effort: while the feed is down it reconnects with
 * backoff and events are missed; a page recovers them by its Last-Event-ID resume.
 */
export interface ProactiveEventFeed {
  /**
   * Delivers each well-formed event to `onEvent` until closed; a lost connection, a failed
   * reconnect or a rejected `onEvent` goes to `log` and never ends the feed.
   */
  listen(input: { onEvent: (event: ProactiveEvent) => Promise<void>; log: (msg: string, err?: unknown) => void }): ProactiveFeedSubscription;
}

export interface ProactiveFeedSubscription {
  /** Stops listening and hands the connection back; resolves once it has. */
  close(): Promise<void>;
}

/** The user's notifications (fired reminders, digests, nudges) and the announcements of new ones. */
export interface NotificationRepository {
  /** Stores a notification once per idempotency key; the row and whether this call created it. */
  insert(input: { notification: NewNotification; at: Date }): Promise<{ notification: NotificationRecord; created: boolean }>;
  /**
   * Announces an event to the API processes. Delivered when the unit of work commits, so inside
   * one a listener never hears of a row it cannot read yet.
   */
  announce(event: ProactiveEvent): Promise<void>;
  get(input: { userId: string; id: string }): Promise<NotificationRecord | undefined>;
  /** Newest first, or — with `afterSeq` — everything after a sequence number, oldest first (an event stream's resume). */
  list(input: { userId: string; limit: number; kind?: NotificationKind; unread?: boolean; afterSeq?: number }): Promise<NotificationRecord[]>;
  countSince(input: { userId: string; kind: NotificationKind; since: Date }): Promise<number>;
  /** Per memory id of `memoryIds`, when the user's latest nudge about it was created (absent: never). */
  lastNudgedAbout(input: { userId: string; memoryIds: string[] }): Promise<Map<string, Date>>;
  /** Marks the unread ones among `ids` read; how many changed. */
  markRead(input: { userId: string; ids: string[]; at: Date }): Promise<number>;
}

/** A user's time zone and proactive settings (digest time, nudges). */
export interface SettingsRepository {
  /** Undefined for an unknown user; missing keys take the defaults. */
  get(input: { userId: string; defaults?: { digestTime?: ClockTime } }): Promise<UserSettings | undefined>;
  /** The stored IANA zone ('UTC' until set); undefined for an unknown user. */
  timeZone(input: { userId: string }): Promise<string | undefined>;
  /** Writes the given fields, keeping every other stored setting; false when the user does not exist. */
  update(input: { userId: string; timezone?: string; digestTime?: ClockTime; proactive?: ProactiveSettings }): Promise<boolean>;
}

/** Users by their storage key. */
export interface UserRepository {
  /** Registers (tenant, user) under its key on the user's first write. Idempotent. */
  ensure(input: { userKey: string; tenantId: string; externalId: string }): Promise<void>;
  exists(input: { userKey: string }): Promise<boolean>;
  /**
   * A write's look-up of its user: `absent`, or `present` after marking a row younger than
   * `markYoungerThanSeconds` as in use (a new row version), so that the request that registered
   * it can no longer take it back under this write ({@link UserRepository.takeBack}).
   */
  claimForWrite(input: { userKey: string; markYoungerThanSeconds: number }): Promise<'absent' | 'present'>;
  /** Inserts the user's row; the version of the row when this call created it, undefined when it was there already. */
  register(input: { userKey: string; tenantId: string; externalId: string }): Promise<{ version: string } | undefined>;
  /**
   * Deletes the row `register` created, only while it is still that version (no write marked or
   * changed it since), younger than `withinSeconds`, and referenced by no row; whether it went.
   */
  takeBack(input: { userKey: string; version: string; withinSeconds: number }): Promise<boolean>;
}

export interface DigestRecord {
  userId: string;
  date: string;
  timeZone: string;
  text: string;
  sections: DigestSections;
  generatedBy: 'llm' | 'template';
  createdAt: Date;
  updatedAt: Date;
}

/** One digest per user and local day; a later run of the same day replaces the text. */
export interface DigestRepository {
  upsert(input: { digest: Omit<DigestRecord, 'createdAt' | 'updatedAt'>; at: Date }): Promise<DigestRecord>;
  /** Digests of the last `days` local days up to and including `today` (YYYY-MM-DD), newest first. */
  recent(input: { userId: string; today: string; days: number }): Promise<DigestRecord[]>;
}

/** One recorded recomputation of a memory's importance (an audit event with a before and an after score). */
export interface ImportanceChange {
  /** The audit event that recorded the change: the identity of the rise, so it is surfaced once. */
  eventId: string;
  memoryId: string;
  text: string;
  type: string;
  before: number;
  after: number;
  at: Date;
}

/** A memory surfaced because its importance rose, with every rise it is surfaced for. */
export interface EscalatedMemory {
  id: string;
  text: string;
  type: string;
  fromLevel: ImportanceLevel;
  toLevel: ImportanceLevel;
  score: number;
  /** The audit events of the rises; each one is recorded as surfaced (`escalate:<eventId>`). */
  causeEventIds: string[];
}

/** An active memory as the digest and nudges weigh it. */
export interface ProactiveMemory {
  id: string;
  text: string;
  type: string;
  importanceLevel: string;
}

/** What a digest and the nudge triggers read of a user's memories. */
export interface ProactiveMemorySource {
  /** High and critical active memories created, changed or recalled in [from, to). */
  importantTouched(input: { userId: string; from: Date; to: Date; limit?: number }): Promise<ProactiveMemory[]>;
  /** Active goals and pain points, most important and recently touched first. */
  goalsAndPainPoints(input: { userId: string; limit?: number }): Promise<(ProactiveMemory & { frequencyCount: number; createdAt: Date; updatedAt: Date })[]>;
  /**
   * Importance recomputations of active memories recorded in [from, to) whose score went up to at
   * least `minScore`, not yet surfaced (no `escalate:<eventId>` event) or surfaced in the digest of
   * `digestDate` (so rewriting that day's digest keeps them), oldest first.
   */
  importanceRises(input: { userId: string; from: Date; to: Date; minScore: number; digestDate: string; limit: number }): Promise<ImportanceChange[]>;
  /** Of `ids`, the user's goals and pain points (any status; the caller decides what is open). */
  goalsAndPainPointsAmong(input: { userId: string; ids: string[] }): Promise<{ id: string; text: string; type: string; status: string; pending: boolean }[]>;
}

export type PageTokenKind = 'code' | 'session';

/**
 * Ids of memory-page tokens that may not be used again: exchanged sign-in codes and signed-out
 * sessions. A record matters only until the token's own expiry.
 */
export interface PageTokenRepository {
  /** Records the token as used; true for the first caller only, however many race. */
  markUsed(input: { tokenId: string; kind: PageTokenKind; expiresAt: Date }): Promise<boolean>;
  isUsed(input: { tokenId: string }): Promise<boolean>;
  /** Forgets tokens that have expired anyway (their signature check refuses them by itself). */
  deleteExpired(input: { now: Date }): Promise<number>;
}
