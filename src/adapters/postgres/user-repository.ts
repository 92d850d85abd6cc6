import type { Queryable } from './pool';

export const userStore = {
  /**
   * Registers (tenant, user) under its storage key on the user's first write. Idempotent; the key
   * is a keyed hash of both, so it can only ever belong to this tenant.
   */
  async ensure(q: Queryable, input: { userKey: string; tenantId: string; externalId: string }): Promise<void> {
    await q.query('INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, $2, $3) ON CONFLICT (user_id) DO NOTHING', [
      input.userKey,
      input.tenantId,
      input.externalId,
    ]);
  },

  async exists(q: Queryable, userKey: string): Promise<boolean> {
    const { rows } = await q.query('SELECT 1 FROM users WHERE user_id = $1', [userKey]);
    return rows.length > 0;
  },

  /** The user's IANA zone (users.timezone, 'UTC' until set); undefined for an unknown user. */
  async timeZoneOf(q: Queryable, userId: string): Promise<string | undefined> {
    const { rows } = await q.query<{ timezone: string }>('SELECT timezone FROM users WHERE user_id = $1', [userId]);
    return rows[0]?.timezone;
  },
};
