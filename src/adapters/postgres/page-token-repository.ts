import type { Queryable } from './pool';

export type PageTokenKind = 'code' | 'session';

/**
 * Ids of memory-page tokens that may not be used again (`page_token_uses`): exchanged sign-in
 * codes and signed-out sessions. A row matters only until the token's own expiry.
 */
export const pageTokenStore = {
  /**
   * Records `tokenId` as used; true for the first caller only. One INSERT … ON CONFLICT, so two
   * concurrent exchanges of the same code cannot both win.
   */
  async markUsed(q: Queryable, tokenId: string, kind: PageTokenKind, expiresAt: Date): Promise<boolean> {
    const { rowCount } = await q.query('INSERT INTO page_token_uses (token_id, kind, expires_at) VALUES ($1, $2, $3) ON CONFLICT (token_id) DO NOTHING', [tokenId, kind, expiresAt]);
    return rowCount === 1;
  },

  async isUsed(q: Queryable, tokenId: string): Promise<boolean> {
    const { rows } = await q.query('SELECT 1 FROM page_token_uses WHERE token_id = $1', [tokenId]);
    return rows.length > 0;
  },

  /** Forgets rows whose token has expired anyway (the signature check refuses those by itself). */
  async deleteExpired(q: Queryable, now: Date): Promise<number> {
    const { rowCount } = await q.query('DELETE FROM page_token_uses WHERE expires_at < $1', [now]);
    return rowCount ?? 0;
  },
};
