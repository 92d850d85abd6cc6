import { resolveSettings, type ClockTime, type ProactiveSettings, type UserSettings } from '../../core/proactive/settings';
import type { Queryable } from './pool';

/** A user's proactive settings: users.timezone plus the digestTime / proactive keys of users.settings. */
export const settingsStore = {
  async get(q: Queryable, userId: string, defaults: { digestTime?: ClockTime } = {}): Promise<UserSettings | undefined> {
    const { rows } = await q.query<{ timezone: string; settings: unknown }>('SELECT timezone, settings FROM users WHERE user_id = $1', [userId]);
    return rows[0] ? resolveSettings(rows[0].timezone, rows[0].settings, defaults) : undefined;
  },

  /**
   * Writes the given fields; other keys of users.settings (owned by other features) are kept.
   * Returns false when the user does not exist.
   */
  async update(q: Queryable, userId: string, patch: { timezone?: string; digestTime?: ClockTime; proactive?: ProactiveSettings }): Promise<boolean> {
    const json: Record<string, unknown> = {};
    if (patch.digestTime !== undefined) json.digestTime = patch.digestTime;
    if (patch.proactive !== undefined) json.proactive = patch.proactive;
    const { rowCount } = await q.query(
      `UPDATE users SET timezone = COALESCE($2, timezone), settings = settings || $3::jsonb WHERE user_id = $1`,
      [userId, patch.timezone ?? null, JSON.stringify(json)],
    );
    return (rowCount ?? 0) > 0;
  },
};
