import type pg from 'pg';
import type { UserApiKeyRecord, UserApiKeyRepository } from '../../core/ports/account';
import { inTransaction } from './pool';

interface Row {
  key_id: string;
  user_id: string;
  tenant_id: string;
  label: string | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
}

const COLUMNS = 'k.key_id, k.user_id, k.tenant_id, k.label, k.created_at, k.expires_at, k.last_used_at';

const toRecord = (r: Row): UserApiKeyRecord => ({
  keyId: r.key_id,
  userKey: r.user_id,
  tenantId: r.tenant_id,
  label: r.label,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
});

/** Per-user API keys in PostgreSQL (`user_api_keys`); the user's row in `users` is their anchor. */
export class PostgresUserApiKeyRepository implements UserApiKeyRepository {
  constructor(private readonly pool: pg.Pool) {}

  /** The user's row is locked for the count and the insert, so racing creations cannot pass the bound together. */
  async create(input: { keyId: string; userKey: string; tenantId: string; secretHash: Buffer; label: string | null; expiresAt: Date | null; now: Date; maxKeys: number }): Promise<UserApiKeyRecord | undefined> {
    return inTransaction(this.pool, async (c) => {
      await c.query('SELECT 1 FROM users WHERE user_id = $1 FOR UPDATE', [input.userKey]);
      await c.query('DELETE FROM user_api_keys WHERE user_id = $1 AND expires_at <= $2', [input.userKey, input.now]);
      const { rows: held } = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM user_api_keys WHERE user_id = $1', [input.userKey]);
      if ((held[0]?.n ?? 0) >= input.maxKeys) return undefined;
      const { rows } = await c.query<Row>(
        `INSERT INTO user_api_keys AS k (key_id, user_id, tenant_id, secret_hash, label, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
        [input.keyId, input.userKey, input.tenantId, input.secretHash, input.label, input.now, input.expiresAt],
      );
      return toRecord(rows[0]!);
    });
  }

  async list({ userKey }: { userKey: string }): Promise<UserApiKeyRecord[]> {
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM user_api_keys k WHERE k.user_id = $1 ORDER BY k.created_at, k.key_id`, [userKey]);
    return rows.map(toRecord);
  }

  async delete({ userKey, keyId }: { userKey: string; keyId: string }): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM user_api_keys WHERE user_id = $1 AND key_id = $2', [userKey, keyId]);
    return rowCount === 1;
  }

  /** Joined with `users` for the tenant's own id of the user, which the routes compare paths and headers with. */
  async findForAuth({ keyId }: { keyId: string }): Promise<(UserApiKeyRecord & { secretHash: Buffer; externalUserId: string }) | undefined> {
    const { rows } = await this.pool.query<Row & { secret_hash: Buffer; external_id: string }>(
      `SELECT ${COLUMNS}, k.secret_hash, u.external_id FROM user_api_keys k JOIN users u ON u.user_id = k.user_id
        WHERE k.key_id = $1 AND u.tenant_id = k.tenant_id AND u.external_id IS NOT NULL`,
      [keyId],
    );
    const row = rows[0];
    return row ? { ...toRecord(row), secretHash: row.secret_hash, externalUserId: row.external_id } : undefined;
  }

  async markUsed({ keyId, at }: { keyId: string; at: Date }): Promise<void> {
    await this.pool.query('UPDATE user_api_keys SET last_used_at = $2 WHERE key_id = $1', [keyId, at]);
  }
}
