/**
 * A user's registration, time zone and proactive settings. The time zone is read here and only
 * here, so every feature that turns "tomorrow" into a date reads the same zone.
 */
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { resolveSettings, type ClockTime, type ProactiveSettings, type UserSettings } from '../core/user-settings';
import type { ServiceDeps } from '../shared/deps';
import { canonicalTimeZone, isValidTimeZone } from '../core/time/zones';

/** The user's stored zone when it is a valid IANA zone ('UTC' until set); undefined for an unknown user. */
export async function storedTimeZone(deps: Pick<ServiceDeps, 'settings'>, userId: string): Promise<string | undefined> {
  const zone = await deps.settings.timeZone({ userId });
  return isValidTimeZone(zone) ? zone : undefined;
}

/** The zone a user's dates mean: the stored one, else UTC. */
export async function userTimeZone(deps: Pick<ServiceDeps, 'settings'>, userId: string): Promise<string> {
  return (await storedTimeZone(deps, userId)) ?? 'UTC';
}

/**
 * What a person who has never written anything has: the defaults. Reads must not register users
 * (only writes do), so the settings page of a new user shows these without creating a row.
 */
export async function settingsOrDefaults(deps: Pick<ServiceDeps, 'settings' | 'config'>, userId: string): Promise<UserSettings> {
  const defaults = { digestTime: deps.config.proactive.digestDefaultTime };
  return (await deps.settings.get({ userId, defaults })) ?? resolveSettings('UTC', {}, defaults);
}

/** The user's settings; not_found for an unknown user. */
export async function userSettings(deps: Pick<ServiceDeps, 'settings' | 'config'>, userId: string): Promise<UserSettings> {
  const settings = await deps.settings.get({ userId, defaults: { digestTime: deps.config.proactive.digestDefaultTime } });
  if (!settings) throw new MemoryServiceError(ErrorCode.notFound, 'unknown user', { userId });
  return settings;
}

/**
 * Changes the given settings (a partial `proactive` is merged over the current one) and returns
 * them as stored; validation_failed for an unknown zone, not_found for an unknown user.
 */
export async function updateSettings(
  deps: Pick<ServiceDeps, 'settings' | 'config'>,
  input: { userId: string; timezone?: string; digestTime?: ClockTime; proactive?: Partial<ProactiveSettings> },
): Promise<UserSettings> {
  if (input.timezone !== undefined && !isValidTimeZone(input.timezone)) {
    throw new MemoryServiceError(ErrorCode.validationFailed, `unknown IANA timezone "${input.timezone}"`, { field: 'timezone' });
  }
  const current = await userSettings(deps, input.userId);
  const proactive = input.proactive ? { ...current.proactive, ...input.proactive, quietHours: input.proactive.quietHours ?? current.proactive.quietHours } : undefined;
  // Stored as tzdata spells it: the digest and nudge Schedules read it case-sensitively.
  const timezone = input.timezone === undefined ? undefined : canonicalTimeZone(input.timezone);
  await deps.settings.update({ userId: input.userId, timezone, digestTime: input.digestTime, proactive });
  return userSettings(deps, input.userId);
}

/** Registers (tenant, user) on the user's first write; idempotent. */
export async function ensureUser(deps: Pick<ServiceDeps, 'users'>, input: { userKey: string; tenantId: string; externalId: string }): Promise<void> {
  await deps.users.ensure(input);
}

export async function userExists(deps: Pick<ServiceDeps, 'users'>, userKey: string): Promise<boolean> {
  return deps.users.exists({ userKey });
}
