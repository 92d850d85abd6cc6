import type { DigestRecord, NotificationRecord, ReminderRecord } from '../core/ports/proactive';

/** What the client sent and where it came from; the instant a create asked for is the service's own bookkeeping. */
function sourceView(source: ReminderRecord['source']): Record<string, unknown> {
  const { requestedDueAt: _requested, ...shown } = source;
  return shown;
}

export function reminderToView(r: ReminderRecord) {
  return {
    id: r.id,
    text: r.text,
    status: r.status,
    dueAt: r.dueAt.toISOString(),
    timezone: r.timeZone,
    ...(r.rrule ? { rrule: r.rrule } : {}),
    assumedTime: r.assumedTime,
    occurrence: r.occurrence,
    fireCount: r.fireCount,
    snoozeCount: r.snoozeCount,
    version: r.version,
    ...(r.firedAt ? { firedAt: r.firedAt.toISOString() } : {}),
    ...(r.snoozedUntil && r.status === 'snoozed' ? { snoozedUntil: r.snoozedUntil.toISOString() } : {}),
    ...(r.dismissedAt ? { dismissedAt: r.dismissedAt.toISOString() } : {}),
    source: sourceView(r.source),
    workflowId: r.workflowId,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export function notificationToView(n: NotificationRecord) {
  return {
    id: n.id,
    seq: n.seq,
    kind: n.kind,
    title: n.title,
    body: n.body,
    ...(n.reminderId ? { reminderId: n.reminderId } : {}),
    data: n.data,
    createdAt: n.createdAt.toISOString(),
    ...(n.readAt ? { readAt: n.readAt.toISOString() } : {}),
  };
}

export function digestToView(d: DigestRecord) {
  return {
    date: d.date,
    timezone: d.timeZone,
    text: d.text,
    sections: d.sections as unknown as Record<string, unknown>,
    generatedBy: d.generatedBy,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}
