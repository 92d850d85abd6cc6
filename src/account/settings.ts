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

/** Refuses a zone tzdata does not know (validation_failed); nothing to check without one. */
export function assertKnownTimeZone(timezone: string | undefined): void {
  if (timezone !== undefined && !isValidTimeZone(timezone)) {
    throw new MemoryServiceError(ErrorCode.validationFailed, `unknown IANA timezone "${timezone}"`, { field: 'timezone' });
  }
}

/**
 * Changes the given settings (a partial `proactive` is merged over the current one) and returns
 * them as stored; validation_failed for an unknown zone, not_found for an unknown user.
 */
export async function updateSettings(
  deps: Pick<ServiceDeps, 'settings' | 'config'>,
  input: { userId: string; timezone?: string; digestTime?: ClockTime; proactive?: Partial<ProactiveSettings> },
): Promise<UserSettings> {
  assertKnownTimeZone(input.timezone);
  const current = await userSettings(deps, input.userId);
  const proactive = input.proactive ? { ...current.proactive, ...input.proactive, quietHours: input.proactive.quietHours ?? current.proactive.quietHours } : undefined;
  // Stored as tzdata spells it: the digest and nudge Schedules read it case-sensitively.
  const timezone = input.timezone === undefined ? undefined : canonicalTimeZone(input.timezone);
  await deps.settings.update({ userId: input.userId, timezone, digestTime: input.digestTime, proactive });
  return userSettings(deps, input.userId);
}

/** A registration this request made: what {@link takeBackRegistration} needs to undo it. */
export interface UserRegistration {
  userKey: string;
  /** The version of the row as the registration inserted it. */
  version: string;
}

/**
 * How long after registering a user the request that did it may still take it back (longer than
 * any request waits: WORKFLOW_WAIT_TIMEOUT_MS, TEMPORAL_CALL_TIMEOUT_MS, statement timeouts).
 */
export const REGISTRATION_TAKE_BACK_SECONDS = 300;
/**
 * How long every write marks the user's row as in use. Longer than the take-back window, so a
 * step back of the database clock cannot leave a write unmarked while a take-back may still run.
 */
export const REGISTRATION_MARK_SECONDS = 900;

/**
 * Makes sure a write's user is registered: `undefined` when they were (or another request
 * registered them meanwhile), else the registration this call made. `beforeRegistering` runs
 * first and may refuse (a check of the request, the new-user budget), so a refused first write
 * registers nobody.
 *
 * Taking a registration back must never delete a user another request is writing for. Deleting
 * afterwards races such a request — it found the user and is about to write — unless both sides
 * meet on the row: every write of a young user rewrites the row (`claimForWrite`), and the
 * take-back deletes only the very version it inserted, in one statement whose row lock waits
 * for such a rewrite or for a row referencing the user. A write that lost the race finds no row
 * and registers the user itself.
 */
export async function registerForWrite(
  deps: Pick<ServiceDeps, 'users'>,
  input: { userKey: string; tenantId: string; externalId: string },
  beforeRegistering: () => Promise<void>,
): Promise<UserRegistration | undefined> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    if ((await deps.users.claimForWrite({ userKey: input.userKey, markYoungerThanSeconds: REGISTRATION_MARK_SECONDS })) === 'present') return undefined;
    if (attempt === 1) await beforeRegistering();
    const created = await deps.users.register(input);
    if (created) return { userKey: input.userKey, version: created.version };
    // Registered by a concurrent request since the look-up: marked as in use by the next one.
  }
  throw new MemoryServiceError(ErrorCode.conflict, 'concurrent requests registered this user and took the registration back again: send the request again', { reason: 'registration_raced' });
}

/**
 * Undoes a registration this request made, when its write was refused: the user goes unless a
 * write marked or referenced them since (then they stay, as registered by that write). Whether
 * the user went.
 */
export async function takeBackRegistration(deps: Pick<ServiceDeps, 'users'>, registration: UserRegistration): Promise<boolean> {
  return deps.users.takeBack({ ...registration, withinSeconds: REGISTRATION_TAKE_BACK_SECONDS });
}

/**
 * A write for a user who may be new, where no hook around a request does the registering (an MCP
 * tool call, an activity): registers the user first ({@link registerForWrite}, `beforeRegistering`
 * as there) and, when the write throws, takes back the registration this call made before the
 * error goes on, so a refused first write leaves no user. Only for writes that leave nothing
 * running once they throw: a write still going would find its user gone. A failed take-back does
 * not replace the write's own error; `onTakeBackFailed` hears of it.
 */
export async function writeAsRegistered<T>(
  deps: Pick<ServiceDeps, 'users'>,
  input: {
    user: { userKey: string; tenantId: string; externalId: string };
    beforeRegistering: () => Promise<void>;
    write: () => Promise<T>;
    onTakeBackFailed: (err: unknown) => void;
  },
): Promise<T> {
  const registration = await registerForWrite(deps, input.user, input.beforeRegistering);
  try {
    return await input.write();
  } catch (err) {
    if (registration) {
      try {
        await takeBackRegistration(deps, registration);
      } catch (takeBackError) {
        input.onTakeBackFailed(takeBackError);
      }
    }
    throw err;
  }
}

export async function userExists(deps: Pick<ServiceDeps, 'users'>, userKey: string): Promise<boolean> {
  return deps.users.exists({ userKey });
}
