/**
 * In-memory fakes of the conversation-side ports (src/core/ports/): conversations, reminders,
 * notifications, settings and users, for millisecond unit tests of the services. They keep the
 * contracts the PostgreSQL adapters keep — user scoping, idempotent inserts, versioned reminder
 * writes, announcements only on commit, a unit of work that rolls back — and nothing else.
 */
import { resolveSettings } from '../../src/core/proactive/settings';
import type { ConversationRepository, StoredMessage } from '../../src/core/ports/conversation';
import type { NotificationRecord, NotificationRepository, ProactiveEvent, ReminderRecord, ReminderRepository, SettingsRepository, UserRepository } from '../../src/core/ports/proactive';
import type { UnitOfWork } from '../../src/core/ports/transaction';
import type { ReminderState } from '../../src/core/proactive/reminder-state';
import { inlineRuleWork } from '../../src/shared/rule-work';
import { serialUnitOfWork, unsupportedTransaction } from './fakes';

interface UserRow {
  tenantId: string;
  externalId: string;
  timezone: string;
  settings: Record<string, unknown>;
}

/** Everything the fakes hold; copied before a unit of work and put back when it fails. */
interface State {
  users: Map<string, UserRow>;
  messages: StoredMessage[];
  /** `${userId}/${conversationId}` → ended. */
  conversations: Map<string, { userId: string; ended: boolean }>;
  reminders: Map<string, ReminderRecord>;
  notifications: NotificationRecord[];
  /** `${userId}|${idempotencyKey}` → notification id. */
  notificationKeys: Map<string, string>;
}

const copy = <T>(x: T): T => structuredClone(x);

function applies(row: ReminderRecord, state: ReminderState): boolean {
  return typeof state.version === 'number' ? row.version < state.version : row.version === 0;
}

/** The conversation-side repositories over one shared state, and a unit of work handing them out. */
export class InMemoryConversationSide {
  state: State = { users: new Map(), messages: [], conversations: new Map(), reminders: new Map(), notifications: [], notificationKeys: new Map() };
  /** Events announced by committed work (or outside any unit of work), in order. */
  announced: ProactiveEvent[] = [];
  private pending: ProactiveEvent[] | undefined;
  private seq = 0;
  private notificationSeq = 0;

  readonly users: UserRepository = {
    ensure: async ({ userKey, tenantId, externalId }) => {
      if (!this.state.users.has(userKey)) this.state.users.set(userKey, { tenantId, externalId, timezone: 'UTC', settings: {} });
    },
    exists: async ({ userKey }) => this.state.users.has(userKey),
    claimForWrite: async ({ userKey }) => (this.state.users.has(userKey) ? 'present' : 'absent'),
    register: async (input) => {
      if (this.state.users.has(input.userKey)) return undefined;
      await this.users.ensure(input);
      return { version: '1' };
    },
    // Nothing here deletes a user: the fake keeps every registration.
    takeBack: async () => false,
  };

  readonly settings: SettingsRepository = {
    get: async ({ userId, defaults }) => {
      const u = this.state.users.get(userId);
      return u ? resolveSettings(u.timezone, u.settings, defaults) : undefined;
    },
    timeZone: async ({ userId }) => this.state.users.get(userId)?.timezone,
    update: async ({ userId, timezone, digestTime, proactive }) => {
      const u = this.state.users.get(userId);
      if (!u) return false;
      if (timezone !== undefined) u.timezone = timezone;
      if (digestTime !== undefined) u.settings.digestTime = digestTime;
      if (proactive !== undefined) u.settings.proactive = proactive;
      return true;
    },
  };

  readonly conversations: ConversationRepository = {
    append: async ({ userId, conversationId, messages }) => {
      const inserted: string[] = [];
      const duplicates: string[] = [];
      for (const m of messages) {
        if (this.state.messages.some((s) => s.id === m.id && s.conversationId === conversationId && this.owner(s) === userId)) duplicates.push(m.id);
        else {
          this.state.messages.push({ id: m.id, role: m.role, content: m.content, at: m.at, seq: ++this.seq, conversationId, userId } as StoredMessage);
          inserted.push(m.id);
        }
      }
      if (messages.length > 0 && !this.state.conversations.has(`${userId}/${conversationId}`)) this.state.conversations.set(`${userId}/${conversationId}`, { userId, ended: false });
      return { inserted, duplicates };
    },
    lockForAppend: async ({ userId, conversationId, ids }) => {
      const held = this.messagesOf(userId, conversationId);
      return { total: held.length, known: held.filter((m) => ids.includes(m.id)).length };
    },
    stored: async ({ userId, conversationId, ids }) =>
      this.messagesOf(userId, conversationId)
        .filter((m) => ids.includes(m.id))
        .map((m) => ({ id: m.id, role: m.role, content: m.content })),
    page: async ({ userId, conversationId, afterSeq, limit }) =>
      this.messagesOf(userId, conversationId)
        .filter((m) => m.seq > afterSeq)
        .slice(0, limit)
        .map((m) => this.strip(m)),
    lastUpTo: async ({ userId, conversationId, seq }) => {
      const last = this.messagesOf(userId, conversationId).findLast((m) => m.seq <= seq);
      return last ? this.strip(last) : undefined;
    },
    exists: async ({ userId, conversationId }) => this.state.conversations.has(`${userId}/${conversationId}`),
    markEnded: async ({ userId, conversationId }) => {
      const c = this.state.conversations.get(`${userId}/${conversationId}`);
      if (c) c.ended = true;
    },
    messagesBetween: async ({ userId, from, to, limit = 1000 }) =>
      this.state.messages
        .filter((m) => this.owner(m) === userId && m.at >= from && m.at < to)
        .slice(0, limit)
        .map((m) => ({ conversationId: m.conversationId, role: m.role, content: m.content, at: m.at })),
  };

  readonly reminders: ReminderRepository = {
    insert: async ({ reminder, at }) => {
      const existing = this.state.reminders.get(reminder.id);
      if (existing) {
        if (existing.userId !== reminder.userId) throw new Error(`reminder ${reminder.id} exists for another user`);
        return { reminder: copy(existing), created: false };
      }
      const row: ReminderRecord = {
        ...reminder,
        status: 'scheduled',
        occurrence: 1,
        firedAt: null,
        snoozedUntil: null,
        dismissedAt: null,
        fireCount: 0,
        snoozeCount: 0,
        version: 0,
        createdAt: at,
        updatedAt: at,
      };
      this.state.reminders.set(row.id, row);
      return { reminder: copy(row), created: true };
    },
    applyState: async ({ userId, state, at }) => {
      const row = this.owned(userId, state.reminderId);
      if (!row || !applies(row, state)) return undefined;
      Object.assign(row, {
        status: state.status,
        dueAt: new Date(state.dueAt),
        occurrence: state.occurrence,
        firedAt: state.firedAt ? new Date(state.firedAt) : null,
        snoozedUntil: state.snoozedUntil ? new Date(state.snoozedUntil) : null,
        dismissedAt: state.dismissedAt ? new Date(state.dismissedAt) : null,
        fireCount: state.fireCount ?? 0,
        snoozeCount: state.snoozeCount ?? 0,
        version: typeof state.version === 'number' ? state.version : row.version,
        updatedAt: at > row.updatedAt ? at : row.updatedAt,
      });
      return copy(row);
    },
    startOccurrence: async ({ userId, state, at }) => {
      const row = this.owned(userId, state.reminderId);
      if (!row || row.occurrence >= state.occurrence) return undefined;
      Object.assign(row, {
        status: state.status,
        dueAt: new Date(state.dueAt),
        occurrence: state.occurrence,
        firedAt: null,
        snoozedUntil: null,
        dismissedAt: null,
        fireCount: 0,
        snoozeCount: 0,
        version: Math.max(row.version + 1, state.version ?? 0),
        updatedAt: at > row.updatedAt ? at : row.updatedAt,
      });
      return copy(row);
    },
    get: async ({ userId, id }) => {
      const row = this.owned(userId, id);
      return row ? copy(row) : undefined;
    },
    list: async ({ userId, status, limit }) =>
      [...this.state.reminders.values()]
        .filter((r) => r.userId === userId && (status === undefined || r.status === status))
        .sort((a, b) => b.dueAt.getTime() - a.dueAt.getTime() || a.id.localeCompare(b.id))
        .slice(0, limit)
        .map(copy),
    dueBetween: async ({ userId, from, to }) =>
      [...this.state.reminders.values()]
        .filter((r) => r.userId === userId && (r.status === 'scheduled' || r.status === 'snoozed'))
        .filter((r) => (r.snoozedUntil ?? r.dueAt) >= from && (r.snoozedUntil ?? r.dueAt) < to)
        .map(copy),
    remove: async ({ userId, id }) => {
      if (this.owned(userId, id)) this.state.reminders.delete(id);
    },
    unstarted: async ({ createdBefore, limit }) =>
      [...this.state.reminders.values()]
        .filter((r) => !this.startedReminders.has(r.id) && (r.status === 'scheduled' || r.status === 'snoozed') && r.createdAt < createdBefore)
        .sort((a, b) => (this.startFailedAt.get(a.id) ?? 0) - (this.startFailedAt.get(b.id) ?? 0) || a.createdAt.getTime() - b.createdAt.getTime())
        .slice(0, limit)
        .map(copy),
    neverStarted: async ({ userId, id }) => this.owned(userId, id) !== undefined && !this.startedReminders.has(id),
    markWorkflowStarted: async ({ userId, id }) => {
      if (this.owned(userId, id)) this.startedReminders.add(id);
    },
    markWorkflowStartFailed: async ({ userId, id, at }) => {
      if (this.owned(userId, id) && !this.startedReminders.has(id)) this.startFailedAt.set(id, at.getTime());
    },
  };
  /** When each reminder's workflow start last failed (epoch ms). */
  readonly startFailedAt = new Map<string, number>();
  /** Reminders whose workflow was seen to start (the row's workflow_started_at). */
  private readonly startedReminders = new Set<string>();

  readonly notifications: NotificationRepository = {
    insert: async ({ notification: n, at }) => {
      const key = `${n.userId}|${n.idempotencyKey}`;
      const existing = this.state.notifications.find((x) => x.id === this.state.notificationKeys.get(key));
      if (existing) return { notification: copy(existing), created: false };
      const row: NotificationRecord = {
        id: n.id,
        seq: ++this.notificationSeq,
        userId: n.userId,
        kind: n.kind,
        title: n.title,
        body: n.body,
        reminderId: n.reminderId ?? null,
        data: n.data ?? {},
        createdAt: at,
        readAt: null,
      };
      this.state.notifications.push(row);
      this.state.notificationKeys.set(key, row.id);
      return { notification: copy(row), created: true };
    },
    announce: async (event) => {
      // Like NOTIFY: delivered when the unit of work commits.
      if (this.pending) this.pending.push(event);
      else this.announced.push(event);
    },
    get: async ({ userId, id }) => copy(this.state.notifications.find((n) => n.userId === userId && n.id === id)),
    list: async ({ userId, limit, kind, unread, afterSeq }) => {
      const mine = this.state.notifications.filter((n) => n.userId === userId && (!kind || n.kind === kind) && (!unread || n.readAt === null) && (afterSeq === undefined || n.seq > afterSeq));
      return (afterSeq === undefined ? mine.reverse() : mine).slice(0, limit).map(copy);
    },
    countSince: async ({ userId, kind, since }) => this.state.notifications.filter((n) => n.userId === userId && n.kind === kind && n.createdAt >= since).length,
    lastNudgedAbout: async ({ userId, memoryIds }) => {
      const out = new Map<string, Date>();
      for (const n of this.state.notifications) {
        const id = (n.data as { memoryId?: unknown }).memoryId;
        if (n.userId !== userId || n.kind !== 'nudge' || typeof id !== 'string' || !memoryIds.includes(id)) continue;
        const seen = out.get(id);
        if (!seen || n.createdAt > seen) out.set(id, n.createdAt);
      }
      return out;
    },
    markRead: async ({ userId, ids, at }) => {
      const unread = this.state.notifications.filter((n) => n.userId === userId && ids.includes(n.id) && n.readAt === null);
      for (const n of unread) n.readAt = at;
      return unread.length;
    },
  };

  /** One at a time (the locks), rolled back on error; announcements go out on commit only. */
  readonly unitOfWork: UnitOfWork = serialUnitOfWork(
    () => ({ ...unsupportedTransaction(), conversations: this.conversations, reminders: this.reminders, notifications: this.notifications, settings: this.settings }),
    () => {
      const saved = { state: copy(this.state), seq: this.seq, notificationSeq: this.notificationSeq };
      this.pending = [];
      return {
        commit: () => {
          this.announced.push(...this.pending!);
          this.pending = undefined;
        },
        rollback: () => {
          Object.assign(this, saved);
          this.pending = undefined;
        },
      };
    },
  );

  /** The ports as services take them from their deps. */
  get deps() {
    return {
      users: this.users,
      settings: this.settings,
      conversations: this.conversations,
      reminders: this.reminders,
      notifications: this.notifications,
      unitOfWork: this.unitOfWork,
      // Segmentation and rules on the test's own thread: nobody else waits on it.
      rules: inlineRuleWork,
    };
  }

  private owner(m: StoredMessage): string {
    return (m as StoredMessage & { userId: string }).userId;
  }

  private strip(m: StoredMessage): StoredMessage {
    const { userId: _u, ...rest } = copy(m) as StoredMessage & { userId: string };
    return rest;
  }

  private messagesOf(userId: string, conversationId: string): StoredMessage[] {
    return this.state.messages.filter((m) => this.owner(m) === userId && m.conversationId === conversationId).sort((a, b) => a.seq - b.seq);
  }

  private owned(userId: string, id: string): ReminderRecord | undefined {
    const row = this.state.reminders.get(id);
    return row && row.userId === userId ? row : undefined;
  }
}
