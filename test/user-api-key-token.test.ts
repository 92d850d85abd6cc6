import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installAuth } from '../src/api/auth';
import { hashUserApiKeySecret, looksLikeUserApiKey, newUserApiKey, parseUserApiKey, userApiKeySecretMatches } from '../src/security/user-api-key-token';

describe('user API key tokens', () => {
  it('round-trips: the token carries its id and a secret whose SHA-256 is what is stored', () => {
    const key = newUserApiKey();
    expect(key.token).toMatch(/^jmu_[0-9a-f]{32}_[\w-]{43}$/);
    const parsed = parseUserApiKey(key.token)!;
    expect(parsed.keyId).toBe(key.keyId);
    expect(hashUserApiKeySecret(parsed.secret).equals(key.secretHash)).toBe(true);
    expect(userApiKeySecretMatches(key.secretHash, parsed.secret)).toBe(true);
    // Two keys never share an id or a secret.
    const other = newUserApiKey();
    expect(other.keyId).not.toBe(key.keyId);
    expect(other.secretHash.equals(key.secretHash)).toBe(false);
  });

  it('refuses a wrong secret, an unknown key (no stored digest) and a digest of another length', () => {
    const key = newUserApiKey();
    const { secret } = parseUserApiKey(newUserApiKey().token)!;
    expect(userApiKeySecretMatches(key.secretHash, secret)).toBe(false);
    expect(userApiKeySecretMatches(undefined, secret)).toBe(false);
    expect(userApiKeySecretMatches(Buffer.alloc(32), secret)).toBe(false);
    expect(userApiKeySecretMatches(Buffer.alloc(31), secret)).toBe(false);
  });

  it('parses only the exact form', () => {
    const { token } = newUserApiKey();
    for (const bad of ['jmu_', `${token}x`, token.slice(0, -1), token.toUpperCase(), token.replace('jmu_', 'jmx_'), ` ${token}`, token.replace(/_/, '-')]) {
      expect(parseUserApiKey(bad), bad).toBeUndefined();
    }
    expect(looksLikeUserApiKey(token)).toBe(true);
    expect(looksLikeUserApiKey('dev-key-change-me')).toBe(false);
  });

  it('refuses at start a tenant key spelled like a user key, which the auth would never try as a tenant key', () => {
    const deps = { tenants: [{ tenantId: 't', key: 'jmu_looks-like-a-user-key-0123456789' }] } as unknown as Parameters<typeof installAuth>[1];
    expect(() => installAuth(Fastify(), deps)).toThrow(/starts with "jmu_"/);
  });
});
