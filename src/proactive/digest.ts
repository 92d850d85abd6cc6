/**
 * The daily digest: gathers the user's day from PostgreSQL, lets the pure core compute the
 * sections, and stores the result (pushing it as a notification unless the user opted out).
 */
import { segmenter as jiebaSegmenter } from '../shared/segmentation';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { buildSuggestions, dominantLanguage, findOpenQuestions, summarizeConversations, type DigestSections } from '../core/proactive/digest-content';
import { digestDay } from '../core/proactive/digest-schedule';
import type { Client } from '@temporalio/client';
import type { DigestRecord } from '../core/ports/proactive';
import { ProactiveWorkflows, type DigestWorkflow } from './contract';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';
import { workflowCallError } from '../shared/workflow-failures';
import { waitForResult, withTemporalDeadline } from '../shared/workflow-wait';
import type { ServiceDeps } from '../shared/deps';
import { storeAndAnnounce } from './notifications';
import { settingsOrDefaults, userSettings } from '../account/settings';
import { gatherEscalations, recordEscalations } from './escalations';

/** The sections of the digest for the local day containing `at`. */
export async function gatherDigest(deps: Pick<ServiceDeps, 'settings' | 'conversations' | 'proactiveMemories' | 'reminders' | 'config'>, userId: string, at: Date): Promise<DigestSections> {
  const settings = await userSettings(deps, userId);
  const tz = settings.timezone;
  const day = digestDay(at, tz);
  const [messages, important, goalsAndPains, tomorrow, escalated] = await Promise.all([
    deps.conversations.messagesBetween({ userId, from: day.start, to: day.end }),
    deps.proactiveMemories.importantTouched({ userId, from: day.start, to: day.end }),
    deps.proactiveMemories.goalsAndPainPoints({ userId, limit: 20 }),
    deps.reminders.dueBetween({ userId, from: day.end, to: new Date(day.end.getTime() + 86_400_000) }),
    gatherEscalations(deps, { userId, settings, day }),
  ]);
  const lang = dominantLanguage(messages, important);
  const openQuestions = findOpenQuestions(messages);
  return {
    date: day.date,
    timeZone: tz,
    lang,
    conversations: summarizeConversations(messages, jiebaSegmenter),
    importantMemories: important,
    escalatedMemories: escalated,
    openQuestions,
    suggestions: buildSuggestions({
      lang,
      openQuestions: openQuestions.length,
      painPoints: goalsAndPains.filter((m) => m.type === 'pain_point'),
      goals: goalsAndPains.filter((m) => m.type === 'goal'),
      tomorrow: tomorrow.map((r) => ({ id: r.id, text: r.text, dueAt: r.snoozedUntil ?? r.dueAt })),
      timeZone: tz,
    }),
  };
}

/** Stores the digest (replacing an earlier one of the same day) and pushes it unless opted out. */
export async function storeDigest(
  deps: Pick<ServiceDeps, 'digests' | 'settings' | 'unitOfWork' | 'config'>,
  input: { userId: string; sections: DigestSections; text: string; generatedBy: 'llm' | 'template'; notify: boolean; at: Date; workflowId?: string; runId?: string },
): Promise<{ notified: boolean; notificationId?: string }> {
  await deps.digests.upsert({
    digest: { userId: input.userId, date: input.sections.date, timeZone: input.sections.timeZone, text: input.text, sections: input.sections, generatedBy: input.generatedBy },
    at: input.at,
  });
  // After the digest row: a crash in between re-runs both on retry, and the events are keyed per rise.
  await recordEscalations(deps, { userId: input.userId, date: input.sections.date, escalated: input.sections.escalatedMemories ?? [], at: input.at, workflowId: input.workflowId, runId: input.runId });
  if (!input.notify) return { notified: false };
  const settings = await userSettings(deps, input.userId);
  if (!settings.proactive.enabled) return { notified: false };
  const zh = input.sections.lang === 'zh';
  const { notification } = await storeAndAnnounce(
    deps,
    {
      userId: input.userId,
      kind: 'digest',
      title: zh ? `今日摘要 · ${input.sections.date}` : `Daily digest · ${input.sections.date}`,
      body: input.text,
      data: { date: input.sections.date },
      idempotencyKey: `digest:${input.userId}:${input.sections.date}`,
    },
    input.at,
  );
  return { notified: true, notificationId: notification.id };
}

/** Digests of the last `days` local days in the user's zone, newest first. */
export async function recentDigests(deps: Pick<ServiceDeps, 'settings' | 'digests' | 'config'>, input: { userId: string; days: number; now: Date }): Promise<DigestRecord[]> {
  const settings = await settingsOrDefaults(deps, input.userId);
  const today = digestDay(input.now, settings.timezone).date;
  return deps.digests.recent({ userId: input.userId, today, days: input.days });
}

/**
 * Writes today's digest now through a DigestWorkflow (not pushed as a notification) and returns
 * it; `pending` with the workflow id when it is still running after WORKFLOW_WAIT_TIMEOUT_MS, or
 * Temporal stopped answering while it ran (the run goes on and `GET …/digests` shows it). A start
 * without an answer within TEMPORAL_CALL_TIMEOUT_MS is `workflowUnavailable`; such a start may
 * still land and write the day's digest, which a second request only writes again.
 */
export async function writeDigestNow(
  deps: Pick<ServiceDeps, 'settings' | 'digests' | 'config'> & { temporal: Client; taskQueue: string },
  input: { userId: string; now: Date },
): Promise<{ pending: false; digest: DigestRecord } | { pending: true; workflowId: string }> {
  const { userId } = input;
  const settings = await userSettings(deps, userId);
  const today = digestDay(input.now, settings.timezone).date;
  const workflowId = `digest:${userId}:now:${today}:${input.now.getTime()}`;
  let written: { date: string };
  try {
    const handle = await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () =>
      deps.temporal.workflow.start<DigestWorkflow>(ProactiveWorkflows.digest, {
        taskQueue: deps.taskQueue,
        workflowId,
        args: [{ userId, notify: false }],
        // Two requests in the same millisecond share the id: the second joins the first's run.
        workflowIdConflictPolicy: 'USE_EXISTING',
        typedSearchAttributes: userSearchAttributes(userId),
        staticSummary: `Digest for ${userId} on request`,
      }),
    );
    const waited = await waitForResult(deps.temporal, () => handle.result(), deps.config.reliability.workflowWaitMs);
    if (!waited.done) return { pending: true, workflowId };
    written = waited.result;
  } catch (err) {
    throw workflowCallError(err, { workflowId, failed: 'writing the digest failed' });
  }
  // The day the workflow wrote, not the one computed above: a time-zone change that lands while
  // the workflow runs moves "today" (it read the settings after this did).
  const [digest] = await deps.digests.recent({ userId, today: written.date, days: 1 });
  // Written, then removed before the read-back by a purge of the user that raced this request.
  if (!digest) throw new MemoryServiceError(ErrorCode.conflict, "the digest was deleted by another request (the user's data was purged) while it was written", { workflowId });
  return { pending: false, digest };
}
