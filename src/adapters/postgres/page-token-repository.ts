import type { PageTokenKind, PageTokenRepository } from '../../core/ports/proactive';
import type { Queryable } from './pool';

export type { PageTokenKind };

/** Used memory-page tokens in PostgreSQL (`page_token_uses`). */
export class PostgresPageTokenRepository implements PageTokenRepository {
  constructor(private readonly q: Queryable) {}

  /** One INSERT … ON CONFLICT, so two concurrent exchanges of the same code cannot both win. */
  async markUsed({ tokenId, kind, expiresAt }: { tokenId: string; kind: PageTokenKind; expiresAt: Date }): Promise<boolean> {
    const { rowCount } = await this.q.query('INSERT INTO page_token_uses (token_id, kind, expires_at) VALUES ($1, $2, $3) ON CONFLICT (token_id) DO NOTHING', [tokenId, kind, expiresAt]);
    return rowCount === 1;
  }

  async isUsed({ tokenId }: { tokenId: string }): Promise<boolean> {
    const { rows } = await this.q.query('SELECT 1 FROM page_token_uses WHERE token_id = $1', [tokenId]);
    return rows.length > 0;
  }

  async deleteExpired({ now }: { now: Date }): Promise<number> {
    const { rowCount } = await this.q.query('DELETE FROM page_token_uses WHERE expires_at < $1', [now]);
    return rowCount ?? 0;
  }
}
