/**
 * The life of one reminder occurrence as a pure state machine. The ReminderWorkflow applies these
 * transitions from its signal/update handlers and its timers; the same functions are unit-tested
 * without Temporal. Time is always a parameter.
 */
import { REMINDER_STATUSES, ReminderStatus, type ReminderSource, type ReminderState } from '../ports/proactive';

// The reminder repository's port stores these states, so their shape lives with the port.
export { REMINDER_STATUSES, ReminderStatus, type ReminderSource, type ReminderState };

/** Snoozes shorter than a minute or longer than 30 days are refused by the API. */
export const MIN_SNOOZE_SECONDS = 60;
export const MAX_SNOOZE_SECONDS = 30 * 24 * 3600;
/** How long a fired reminder stays open for "稍后"/"知道了" before its workflow closes. */
export const DEFAULT_ACK_WINDOW_SECONDS = 24 * 3600;


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
