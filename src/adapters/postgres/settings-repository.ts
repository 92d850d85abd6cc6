import { resolveSettings, type ClockTime, type ProactiveSettings, type UserSettings } from '../../core/proactive/settings';
import type { SettingsRepository } from '../../core/ports/proactive';
import type { Queryable } from './pool';

/** A user's settings in PostgreSQL: users.timezone plus the digestTime / proactive keys of users.settings. */
export class PostgresSettingsRepository implements SettingsRepository {
  constructor(private readonly q: Queryable) {}

  async get({ userId, defaults = {} }: { userId: string; defaults?: { digestTime?: ClockTime } }): Promise<UserSettings | undefined> {
    const { rows } = await this.q.query<{ timezone: string; settings: unknown }>('SELECT timezone, settings FROM users WHERE user_id = $1', [userId]);
    return rows[0] ? resolveSettings(rows[0].timezone, rows[0].settings, defaults) : undefined;
  }

  async timeZone({ userId }: { userId: string }): Promise<string | undefined> {
    const { rows } = await this.q.query<{ timezone: string }>('SELECT timezone FROM users WHERE user_id = $1', [userId]);
    return rows[0]?.timezone;
  }

  /** Other keys of users.settings (owned by other features) are kept. */
  async update({ userId, ...patch }: { userId: string; timezone?: string; digestTime?: ClockTime; proactive?: ProactiveSettings }): Promise<boolean> {
    const json: Record<string, unknown> = {};
    if (patch.digestTime !== undefined) json.digestTime = patch.digestTime;
    if (patch.proactive !== undefined) json.proactive = patch.proactive;
    const { rowCount } = await this.q.query(
      `UPDATE users SET timezone = COALESCE($2, timezone), settings = settings || $3::jsonb WHERE user_id = $1`,
      [userId, patch.timezone ?? null, JSON.stringify(json)],
    );
    return (rowCount ?? 0) > 0;
  }
}
