import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';

describe('config', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    expect(c.temporal.namespace).toBe('jarvis-memory');
    expect(c.temporal.retentionDays).toBe(30);
    expect(c.tenants).toEqual([{ tenantId: 'dev', key: 'dev-key-change-me' }]);
    expect(c.llm).toEqual({ provider: 'none' });
  });

  it('refuses to run production on a key or secret anyone could know or guess', () => {
    const strong = { NODE_ENV: 'production', API_KEYS: `acme:${'k'.repeat(32)}`, SECRET_KEY: 's'.repeat(32), PAYLOAD_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
    expect(loadConfig(strong).tenants).toEqual([{ tenantId: 'acme', key: 'k'.repeat(32) }]);
    expect(() => loadConfig({ NODE_ENV: 'production', SECRET_KEY: strong.SECRET_KEY })).toThrow(/API_KEYS.*development key/);
    expect(() => loadConfig({ ...strong, API_KEYS: 'acme:dev-key-change-me' })).toThrow(/API_KEYS/);
    expect(() => loadConfig({ ...strong, API_KEYS: `acme:${'k'.repeat(31)}` })).toThrow(/API_KEYS.*shorter than 32 bytes/);
    expect(() => loadConfig({ ...strong, API_KEYS: `acme:${'k'.repeat(40)},beta:short-key-1` })).toThrow(/beta/);
    expect(() => loadConfig({ ...strong, SECRET_KEY: undefined })).toThrow(/SECRET_KEY.*required/);
    expect(() => loadConfig({ ...strong, SECRET_KEY: 'x'.repeat(31) })).toThrow(/SECRET_KEY/);
    expect(() => loadConfig({ ...strong, PAYLOAD_MASTER_KEY: undefined })).toThrow(/PAYLOAD_MASTER_KEY/);
    expect(() => loadConfig({ ...strong, CODEC_AUTH_TOKEN: 'short-token-1234' })).toThrow(/CODEC_AUTH_TOKEN/);
    // Development and tests keep working with no configuration at all.
    expect(() => loadConfig({ NODE_ENV: 'development' })).not.toThrow();
  });

  it('refuses the public development values of .env.example and the source when production sets them explicitly', () => {
    const strong = { NODE_ENV: 'production', API_KEYS: `acme:${'k'.repeat(32)}`, SECRET_KEY: 's'.repeat(32), PAYLOAD_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
    const devMaster = 'otK/xO7WGjgj1qnNixKECz1YfDzSSH4vPsRnjDaV+SM=';
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ ...strong, ...env });
      } catch (err) {
        return err instanceof ConfigError ? err.problems.map((p) => p.variable) : ['not a ConfigError'];
      }
      return [];
    };
    // Every spelling parseKeyMaterial accepts is the same 32 bytes, and all of them are public.
    const bytes = Buffer.from(devMaster, 'base64');
    for (const spelling of [devMaster, bytes.toString('hex'), bytes.toString('hex').toUpperCase(), bytes.toString('base64url'), ` ${devMaster} `]) {
      expect(refusal({ PAYLOAD_MASTER_KEY: spelling }), spelling).toEqual(['PAYLOAD_MASTER_KEY']);
    }
    expect(refusal({ SECRET_KEY: 'jarvis-memory development secret: never use in production' })).toEqual(['SECRET_KEY']);
    expect(refusal({ API_KEYS: 'dev:dev-key-change-me' })).toEqual(['API_KEYS']);
    expect(refusal({ CODEC_AUTH_TOKEN: 'dev-codec-token-change-me' })).toEqual(['CODEC_AUTH_TOKEN']);
    // All of them at once: one start, every variable named.
    expect(refusal({ PAYLOAD_MASTER_KEY: devMaster, API_KEYS: 'dev:dev-key-change-me', SECRET_KEY: 'jarvis-memory development secret: never use in production' }).sort()).toEqual(['API_KEYS', 'PAYLOAD_MASTER_KEY', 'SECRET_KEY']);
    // Outside production the development key stays usable when written out.
    expect(loadConfig({ PAYLOAD_MASTER_KEY: devMaster }).payloads.masterKey.equals(bytes)).toBe(true);
  });

  it('fails fast naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ CHROMA_URL: 'not a url' })).toThrow(/CHROMA_URL/);
    expect(() => loadConfig({ API_KEYS: 'nokey' })).toThrow(/API_KEYS/);
    expect(() => loadConfig({ LLM_PROVIDER: 'openai-compatible' })).toThrow(/LLM_BASE_URL/);
    expect(() => loadConfig({ SCHEDULE_TIMEZONE: 'Mars/Olympus' })).toThrow(/SCHEDULE_TIMEZONE/);
    // A rewrite policy without a model would quietly do nothing on every message.
    expect(() => loadConfig({ RECALL_QUERY_REWRITE: 'referential' })).toThrow(/RECALL_QUERY_REWRITE.*LLM_PROVIDER/);
    expect(() => loadConfig({ RECALL_QUERY_REWRITE: 'sometimes' })).toThrow(/RECALL_QUERY_REWRITE/);
    expect(loadConfig({ RECALL_QUERY_REWRITE: 'referential', LLM_PROVIDER: 'openai-compatible', LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm' }).recall.queryRewrite).toBe('referential');
    // The LLM conflict resolver follows the model unless turned off.
    const withModel = { LLM_PROVIDER: 'openai-compatible', LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm' };
    expect(loadConfig({}).extraction.conflictResolver).toBe('rules');
    expect(loadConfig(withModel).extraction.conflictResolver).toBe('llm');
    expect(loadConfig({ ...withModel, CONFLICT_RESOLVER: 'rules' }).extraction.conflictResolver).toBe('rules');
    try {
      loadConfig({ TEMPORAL_RETENTION_DAYS: '-1' });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems[0]!.variable).toBe('TEMPORAL_RETENTION_DAYS');
    }
  });

  it('needs its own SECRET_KEY in production, at least 32 bytes anywhere', () => {
    expect(loadConfig({}).secretKey.length).toBeGreaterThanOrEqual(32);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRET_KEY/);
    expect(() => loadConfig({ SECRET_KEY: 'too-short' })).toThrow(/SECRET_KEY/);
    expect(loadConfig({ NODE_ENV: 'production', API_KEYS: `acme:${'k'.repeat(32)}`, SECRET_KEY: 'x'.repeat(32), PAYLOAD_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') }).secretKey.toString('utf8')).toBe('x'.repeat(32));
  });

  it('caps the page sign-in code at the page session lifetime', () => {
    expect(loadConfig({}).page).toEqual({ sessionTtlSeconds: 900, codeTtlSeconds: 300 });
    expect(loadConfig({ PAGE_TOKEN_TTL_SECONDS: '120' }).page).toEqual({ sessionTtlSeconds: 120, codeTtlSeconds: 120 });
    expect(() => loadConfig({ PAGE_TOKEN_TTL_SECONDS: '5' })).toThrow(/PAGE_TOKEN_TTL_SECONDS/);
  });

  it('has rate limits sized for an interactive chat, each configurable and 0 for off', () => {
    const c = loadConfig({});
    expect(c.rateLimits).toEqual({
      windowSeconds: 60,
      perUser: { recall: 120, writes: 240, llm: 60, exports: 400 },
      perKey: { recall: 6000, writes: 12_000, llm: 1200, exports: 4000 },
      newUsersPerTenant: 120,
    });
    expect(c.maxMessagesBodyBytes).toBe(8 * 1024 * 1024);
    const tuned = loadConfig({ RATE_LIMIT_WINDOW_SECONDS: '10', RATE_LIMIT_RECALL_PER_USER: '0', RATE_LIMIT_LLM_PER_KEY: '7', RATE_LIMIT_NEW_USERS_PER_TENANT: '5', MAX_MESSAGES_BODY_BYTES: '1048576' });
    expect(tuned.rateLimits).toMatchObject({ windowSeconds: 10, perUser: { recall: 0 }, perKey: { llm: 7 }, newUsersPerTenant: 5 });
    expect(tuned.maxMessagesBodyBytes).toBe(1024 * 1024);
    expect(() => loadConfig({ RATE_LIMIT_RECALL_PER_USER: '-1' })).toThrow(/RATE_LIMIT_RECALL_PER_USER/);
    expect(() => loadConfig({ RATE_LIMIT_WINDOW_SECONDS: '0' })).toThrow(/RATE_LIMIT_WINDOW_SECONDS/);
    expect(() => loadConfig({ RATE_LIMIT_WRITES_PER_KEY: 'lots' })).toThrow(/RATE_LIMIT_WRITES_PER_KEY/);
    expect(() => loadConfig({ MAX_MESSAGES_BODY_BYTES: '100' })).toThrow(/MAX_MESSAGES_BODY_BYTES/);
  });

  it('parses several tenants', () => {
    const c = loadConfig({ API_KEYS: 'acme:key-acme-123, globex:key-globex-456' });
    expect(c.tenants.map((t) => t.tenantId)).toEqual(['acme', 'globex']);
  });
});
