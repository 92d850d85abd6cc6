import { isForeignKeyViolation } from '../../core/errors';
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

  /**
   * One indexed read for an established user. A young row is rewritten as it is (`SET created_at
   * = created_at`): a new row version, with a new `xmin`, is the mark `takeBack` looks for. No
   * row updated means a take-back deleted it after the read: the caller registers the user anew.
   */
  async claimForWrite({ userKey, markYoungerThanSeconds }: { userKey: string; markYoungerThanSeconds: number }): Promise<'absent' | 'present'> {
    const { rows } = await this.q.query<{ young: boolean }>("SELECT created_at > now() - $2 * interval '1 second' AS young FROM users WHERE user_id = $1", [userKey, markYoungerThanSeconds]);
    if (rows.length === 0) return 'absent';
    if (!rows[0]!.young) return 'present';
    const { rowCount } = await this.q.query('UPDATE users SET created_at = created_at WHERE user_id = $1', [userKey]);
    return rowCount ? 'present' : 'absent';
  }

  /** As {@link ensure} (no conflict target, for the same reason); the row's `xmin` is its version. */
  async register(input: { userKey: string; tenantId: string; externalId: string }): Promise<{ version: string } | undefined> {
    const { rows } = await this.q.query<{ version: string }>(
      'INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING xmin::text AS version',
      [input.userKey, input.tenantId, input.externalId],
    );
    return rows[0] ? { version: rows[0].version } : undefined;
  }

  /**
   * One statement: the row lock it takes waits for a write marking the row (then the version no
   * longer matches) or inserting a row that references it (then the foreign key refuses the
   * delete, 23503, and the user stays). A row of a table without a foreign key to users is
   * written only by a request that marked the row first, or after a row that has one.
   */
  async takeBack({ userKey, version, withinSeconds }: { userKey: string; version: string; withinSeconds: number }): Promise<boolean> {
    try {
      const { rowCount } = await this.q.query("DELETE FROM users WHERE user_id = $1 AND xmin = $2::xid AND created_at > now() - $3 * interval '1 second'", [userKey, version, withinSeconds]);
      return (rowCount ?? 0) > 0;
    } catch (err) {
      if (isForeignKeyViolation(err)) return false;
      throw err;
    }
  }
}
