import type { UserRepository } from '../../core/ports/proactive';
import type { Queryable } from './pool';

/** Users in PostgreSQL (`users`), by storage key. */
export class PostgresUserRepository implements UserRepository {
  constructor(private readonly q: Queryable) {}

  /**
   * The key is a keyed hash of (tenant, user), so it can only ever belong to this tenant.
   * `ON CONFLICT` names no index on purpose: users has two unique ones (the key, and tenant with
   * external id), and racing first requests of one user could otherwise pass the key's check
   * together and fail on the other index with a 500.
   */
  async ensure(input: { userKey: string; tenantId: string; externalId: string }): Promise<void> {
    await this.q.query('INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      input.userKey,
      input.tenantId,
      input.externalId,
    ]);
  }

  async exists({ userKey }: { userKey: string }): Promise<boolean> {
    const { rows } = await this.q.query('SELECT 1 FROM users WHERE user_id = $1', [userKey]);
    return rows.length > 0;
  }
}
