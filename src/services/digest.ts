/**
 * The daily digest: gathers the user's day from PostgreSQL, lets the pure core compute the
 * sections, and stores the result (pushing it as a notification unless the user opted out).
 */
import { digestStore, proactiveSources } from '../adapters/postgres/digest-repository';
import { reminderStore } from '../adapters/postgres/reminder-repository';
import { settingsStore } from '../adapters/postgres/settings-repository';
import { jiebaSegmenter } from '../adapters/text/jieba';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { buildSuggestions, dominantLanguage, findOpenQuestions, summarizeConversations, type DigestSections } from '../core/proactive/digest-content';
import { digestDay } from '../core/proactive/digest-schedule';
import { resolveSettings, type UserSettings } from '../core/proactive/settings';
import type { ServiceDeps } from './deps';
import { storeAndAnnounce } from './notifications';

/**
 * What a person who has never written anything has: the defaults. Reads must not register users
 * (only writes do), so the settings page of a new user shows these without creating a row.
 */
export async function settingsOrDefaults(deps: Pick<ServiceDeps, 'pool' | 'config'>, userId: string): Promise<UserSettings> {
  const defaults = { digestTime: deps.config.proactive.digestDefaultTime };
  return (await settingsStore.get(deps.pool, userId, defaults)) ?? resolveSettings('UTC', {}, defaults);
}

export async function userSettings(deps: Pick<ServiceDeps, 'pool' | 'config'>, userId: string): Promise<UserSettings> {
  const settings = await settingsStore.get(deps.pool, userId, { digestTime: deps.config.proactive.digestDefaultTime });
  if (!settings) throw new MemoryServiceError(ErrorCode.notFound, 'unknown user', { userId });
  return settings;
}

/** The sections of the digest for the local day containing `at`. */
export async function gatherDigest(deps: Pick<ServiceDeps, 'pool' | 'config'>, userId: string, at: Date): Promise<DigestSections> {
  const settings = await userSettings(deps, userId);
  const tz = settings.timezone;
  const day = digestDay(at, tz);
  const [messages, important, goalsAndPains, tomorrow] = await Promise.all([
    proactiveSources.messagesBetween(deps.pool, userId, day.start, day.end),
    proactiveSources.importantTouched(deps.pool, userId, day.start, day.end),
    proactiveSources.goalsAndPainPoints(deps.pool, userId, 20),
    reminderStore.dueBetween(deps.pool, userId, day.end, new Date(day.end.getTime() + 86_400_000)),
  ]);
  const lang = dominantLanguage(messages, important);
  const openQuestions = findOpenQuestions(messages);
  return {
    date: day.date,
    timeZone: tz,
    lang,
    conversations: summarizeConversations(messages, jiebaSegmenter),
    importantMemories: important,
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
  deps: Pick<ServiceDeps, 'pool' | 'config'>,
  input: { userId: string; sections: DigestSections; text: string; generatedBy: 'llm' | 'template'; notify: boolean; at: Date },
): Promise<{ notified: boolean; notificationId?: string }> {
  await digestStore.upsert(deps.pool, { userId: input.userId, date: input.sections.date, timeZone: input.sections.timeZone, text: input.text, sections: input.sections, generatedBy: input.generatedBy }, input.at);
  if (!input.notify) return { notified: false };
  const settings = await userSettings(deps, input.userId);
  if (!settings.proactive.enabled) return { notified: false };
  const zh = input.sections.lang === 'zh';
  const { notification } = await storeAndAnnounce(
    deps.pool,
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
