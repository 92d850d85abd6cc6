/**
 * The life of one reminder occurrence as a pure state machine. The ReminderWorkflow applies these
 * transitions from its signal/update handlers and its timers; the same functions are unit-tested
 * without Temporal. Time is always a parameter.
 */

export const ReminderStatus = {
  scheduled: 'scheduled',
  snoozed: 'snoozed',
  fired: 'fired',
  dismissed: 'dismissed',
  cancelled: 'cancelled',
} as const;
export type ReminderStatus = (typeof ReminderStatus)[keyof typeof ReminderStatus];
export const REMINDER_STATUSES = Object.values(ReminderStatus) as [ReminderStatus, ...ReminderStatus[]];

/** Snoozes shorter than a minute or longer than 30 days are refused by the API. */
export const MIN_SNOOZE_SECONDS = 60;
export const MAX_SNOOZE_SECONDS = 30 * 24 * 3600;
/** How long a fired reminder stays open for "稍后"/"知道了" before its workflow closes. */
export const DEFAULT_ACK_WINDOW_SECONDS = 24 * 3600;

/** Where a reminder came from: the API, or a user message in a conversation. */
export interface ReminderSource {
  via: 'api' | 'conversation';
  conversationId?: string;
  messageId?: string;
  /** The recognised words ("明天下午三点…提醒我"), kept for the audit. */
  matched?: string;
  requestId?: string;
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

/** Dismissed and cancelled occurrences are over; everything else still waits for something. */
export function isClosed(state: Pick<ReminderState, 'status'>): boolean {
  return state.status === ReminderStatus.dismissed || state.status === ReminderStatus.cancelled;
}

export function initialState(reminderId: string, dueAt: Date, occurrence = 1, version = 0): ReminderState {
  return { reminderId, status: ReminderStatus.scheduled, dueAt: dueAt.toISOString(), occurrence, fireCount: 0, snoozeCount: 0, version };
}

/** "稍后": fire again `seconds` from now. Allowed before and after firing; a closed one stays closed. */
export function snooze(state: ReminderState, seconds: number, now: Date): ReminderState {
  if (isClosed(state)) return state;
  const clamped = Math.min(MAX_SNOOZE_SECONDS, Math.max(1, Math.round(seconds)));
  return {
    ...state,
    status: ReminderStatus.snoozed,
    snoozedUntil: new Date(now.getTime() + clamped * 1000).toISOString(),
    snoozeCount: state.snoozeCount + 1,
  };
}

/** "知道了": before firing it means "no need", after firing "got it"; either way this occurrence is done. */
export function dismiss(state: ReminderState, now: Date): ReminderState {
  if (isClosed(state)) return state;
  return { ...state, status: ReminderStatus.dismissed, dismissedAt: now.toISOString(), snoozedUntil: undefined };
}

export function cancel(state: ReminderState, now: Date): ReminderState {
  if (isClosed(state)) return state;
  return { ...state, status: ReminderStatus.cancelled, cancelledAt: now.toISOString(), snoozedUntil: undefined };
}

/** Moves the due time; a fired or snoozed occurrence becomes scheduled again. */
export function reschedule(state: ReminderState, dueAt: Date): ReminderState {
  if (isClosed(state)) return state;
  return { ...state, status: ReminderStatus.scheduled, dueAt: dueAt.toISOString(), snoozedUntil: undefined, firedAt: undefined };
}

export function fire(state: ReminderState, now: Date): ReminderState {
  if (isClosed(state)) return state;
  return { ...state, status: ReminderStatus.fired, firedAt: now.toISOString(), snoozedUntil: undefined, fireCount: state.fireCount + 1 };
}

/** Why the workflow wakes up next, and when (undefined: the occurrence is closed). */
export type Wake = { at: Date; reason: 'due' | 'snooze-over' | 'ack-window-over' };

/**
 * The next timer of an open occurrence: its due time, the end of a snooze, or — once fired — the
 * end of the window in which the user may still snooze or dismiss it. `latestAck` caps that window
 * (a recurring reminder's next occurrence must not wait for the previous one's window).
 */
export function nextWake(state: ReminderState, ackWindowSeconds: number, latestAck?: Date): Wake | undefined {
  switch (state.status) {
    case ReminderStatus.scheduled:
      return { at: new Date(state.dueAt), reason: 'due' };
    case ReminderStatus.snoozed:
      return { at: new Date(state.snoozedUntil ?? state.dueAt), reason: 'snooze-over' };
    case ReminderStatus.fired: {
      const end = new Date(new Date(state.firedAt ?? state.dueAt).getTime() + ackWindowSeconds * 1000);
      return { at: latestAck && latestAck < end ? latestAck : end, reason: 'ack-window-over' };
    }
    default:
      return undefined;
  }
}
