import { describe, expect, it } from 'vitest';
import { PageTokens } from '../src/api/page-session';
import { ServiceSecrets } from '../src/security/secrets';

const tokens = new PageTokens(new ServiceSecrets(Buffer.alloc(32, 7)).key('page-token'), { sessionTtlSeconds: 900, codeTtlSeconds: 300 });
const alice = { tenantId: 'tenant-a', userId: 'alice@example.com' };
const now = new Date('2026-05-01T10:00:00Z');

describe('page tokens', () => {
  it('carry tenant, user, expiry and a random id, and check under their own kind', () => {
    const { token, claims, expiresAt } = tokens.issue('code', alice, now);
    expect(claims).toMatchObject({ t: 'tenant-a', u: 'alice@example.com' });
    expect(expiresAt.getTime() - now.getTime()).toBe(300_000);
    expect(tokens.check('code', token, now)).toEqual({ ok: true, claims });
    expect(tokens.issue('code', alice, now).claims.jti).not.toBe(claims.jti);
    expect(tokens.issue('session', alice, now).expiresAt.getTime() - now.getTime()).toBe(900_000);
  });

  it('refuse a code used as a session (and back), a tampered claim or signature, another key, and expiry', () => {
    const code = tokens.issue('code', alice, now).token;
    const session = tokens.issue('session', alice, now).token;
    expect(tokens.check('session', code, now)).toEqual({ ok: false, reason: 'malformed' });
    // Same claims under the other kind's prefix: the kind is inside the MAC.
    expect(tokens.check('session', code.replace(/^pc1/, 'ps1'), now)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(tokens.check('code', session, now).ok).toBe(false);

    const [prefix, payload, sig] = code.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), u: 'bob' })).toString('base64url');
    expect(tokens.check('code', `${prefix}.${forged}.${sig}`, now)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(tokens.check('code', `${prefix}.${payload}.${sig![0] === 'A' ? 'B' : 'A'}${sig!.slice(1)}`, now)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(tokens.check('code', `${prefix}.${payload}`, now)).toEqual({ ok: false, reason: 'malformed' });

    const other = new PageTokens(new ServiceSecrets(Buffer.alloc(32, 8)).key('page-token'), { sessionTtlSeconds: 900, codeTtlSeconds: 300 });
    expect(other.check('code', code, now)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(tokens.check('code', code, new Date(now.getTime() + 300_000))).toEqual({ ok: false, reason: 'expired' });
    expect(tokens.check('code', code, new Date(now.getTime() + 299_000)).ok).toBe(true);
  });
});
