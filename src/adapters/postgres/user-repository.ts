import type { Queryable } from './pool';

export const userStore = {
  /**
   * Registers the user under `tenantId` on first contact and returns the owning tenant, which may
   * be another one: the caller refuses access then.
   */
  async claim(q: Queryable, userId: string, tenantId: string): Promise<string> {
    const { rows } = await q.query<{ tenant_id: string }>(
      `WITH ins AS (INSERT INTO users (user_id, tenant_id) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING RETURNING tenant_id)
       SELECT tenant_id FROM ins UNION ALL SELECT tenant_id FROM users WHERE user_id = $1 LIMIT 1`,
      [userId, tenantId],
    );
    return rows[0]!.tenant_id;
  },

  /** The user's IANA zone (users.timezone, 'UTC' until set); undefined for an unknown user. */
  async timeZoneOf(q: Queryable, userId: string): Promise<string | undefined> {
    const { rows } = await q.query<{ timezone: string }>('SELECT timezone FROM users WHERE user_id = $1', [userId]);
    return rows[0]?.timezone;
  },

  async tenantOf(q: Queryable, userId: string): Promise<string | undefined> {
    const { rows } = await q.query<{ tenant_id: string }>('SELECT tenant_id FROM users WHERE user_id = $1', [userId]);
    return rows[0]?.tenant_id;
  },
};
