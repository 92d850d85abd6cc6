/**
 * The pieces the environment schema (index.ts) is built from: value parsers, the development
 * defaults, key material, the configuration error. Reads no environment itself.
 */
import { z } from 'zod';
import { MEMORY_TYPES, type MemoryType } from '../core/types';

/** NODE_ENV's values. */
export const NODE_ENVS = ['development', 'test', 'production'] as const;
/** LOG_LEVEL's values. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** Accepted outside production only: `npm run dev` must work with no configuration at all. */
export const DEV_API_KEY = 'dev-key-change-me';
export const DEV_SECRET_KEY = 'jarvis-memory development secret: never use in production';
/** Production keys must carry at least this much entropy-bearing length. */
export const MIN_PRODUCTION_KEY_BYTES = 32;

export const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
export const optionalUrl = z.preprocess(blankToUndefined, z.string().trim().url().optional());
export const optionalString = z.preprocess(blankToUndefined, z.string().trim().optional());
export const port = z.coerce.number().int().min(0).max(65535);
export const positiveInt = z.coerce.number().int().positive();

/**
 * The client-side bounds on PostgreSQL statements (DATABASE_QUERY_TIMEOUT_MS,
 * DATABASE_LONG_QUERY_TIMEOUT_MS): also the pool's own defaults, so a pool built without the
 * configuration is bounded the same way.
 */
export const DATABASE_TIMEOUT_DEFAULTS = { queryTimeoutMs: 15_000, longQueryTimeoutMs: 120_000 } as const;
/** A rate-limit budget: requests per window; 0 turns that budget off. */
export const budget = z.coerce.number().int().min(0);

export const tenantsSchema = z
  .string()
  .transform((raw, ctx) => {
    // Format: "tenant:key,tenant2:key2" — one API key per entry; a tenant may have several keys.
    const entries = raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const keys: { tenantId: string; key: string }[] = [];
    for (const entry of entries) {
      const idx = entry.indexOf(':');
      const tenantId = entry.slice(0, idx);
      const key = entry.slice(idx + 1);
      if (idx <= 0 || key.length < 8 || !/^[\w.-]{1,64}$/.test(tenantId)) {
        ctx.addIssue({
          code: 'custom',
          message: `expected "tenant:key" entries (key ≥ 8 characters), got "${entry.slice(0, 20)}…"`,
        });
        return z.NEVER;
      }
      keys.push({ tenantId, key });
    }
    if (keys.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'at least one "tenant:key" entry is required' });
      return z.NEVER;
    }
    return keys;
  });

/** "type:days" pairs, comma-separated; "none" means the type never expires (MEMORY_TTL_DAYS). */
export const ttlSchema = z.string().transform((raw, ctx) => {
  const ttl: Partial<Record<MemoryType, number | null>> = {};
  for (const entry of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [type, days] = entry.split(':').map((s) => s.trim());
    const known = (MEMORY_TYPES as readonly string[]).includes(type ?? '');
    const value = days === 'none' ? null : Number(days);
    if (!known || (value !== null && !(Number.isInteger(value) && value > 0))) {
      ctx.addIssue({ code: 'custom', message: `expected "type:days" or "type:none" with a memory type and a positive whole number of days, got "${entry.slice(0, 40)}"` });
      return z.NEVER;
    }
    ttl[type as MemoryType] = value;
  }
  return ttl;
});

/** Retention age in days: a positive whole number, or 0 / "none" for keeping forever (null). */
export const retentionDays = (fallback: number) =>
  z.preprocess(
    (v) => {
      const raw = blankToUndefined(v);
      return typeof raw === 'string' && raw.trim().toLowerCase() === 'none' ? '0' : raw;
    },
    z.coerce
      .number()
      .int('expected a whole number of days, 0 or "none"')
      .min(0, 'expected a whole number of days, 0 or "none"')
      .default(fallback)
      .transform((days) => (days === 0 ? null : days)),
  );

export const llmSchema = z.discriminatedUnion('provider', [
  z.object({ provider: z.literal('none') }),
  z.object({
    provider: z.literal('openai-compatible'),
    baseUrl: z.string().url(),
    apiKey: z.string().default('not-needed'),
    model: z.string().min(1),
  }),
  z.object({
    provider: z.literal('anthropic'),
    apiKey: z.string().min(1),
    model: z.string().min(1),
  }),
]);

export const embedderSchema = z.discriminatedUnion('provider', [
  z.object({
    provider: z.literal('openai-compatible'),
    /** Unset: the local stack starts the bundled offline multilingual-e5-small server. */
    baseUrl: z.string().url().optional(),
    apiKey: z.string().default('not-needed'),
    model: z.string().min(1),
    dimensions: positiveInt,
    /** Interactive requests in flight per process; bulk work has one more slot of its own. */
    concurrency: positiveInt.default(2),
    timeoutMs: positiveInt.default(30_000),
  }),
  z.object({ provider: z.literal('hashing'), dimensions: positiveInt }),
]);


/** Thrown at start when the environment is invalid; names every offending variable. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid configuration: ${problems.map((p) => `${p.variable}: ${p.message}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

export function fail(variable: string, message: string): never {
  throw new ConfigError([{ variable, message }]);
}

/**
 * The development payload master key: fixed and public, so a dev database stays readable across
 * restarts. Never a secret — production sets PAYLOAD_MASTER_KEY.
 */
export const DEV_PAYLOAD_MASTER_KEY = 'otK/xO7WGjgj1qnNixKECz1YfDzSSH4vPsRnjDaV+SM=';
export const DEV_CODEC_AUTH_TOKEN = 'dev-codec-token-change-me';

/** 32 bytes of key material, written as 64 hex digits or as base64. */
export function parseKeyMaterial(text: string): Buffer | undefined {
  const t = text.trim();
  if (/^[0-9a-f]{64}$/i.test(t)) return Buffer.from(t, 'hex');
  if (!/^[\w+/-]{42,44}={0,2}$/.test(t)) return undefined;
  const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

export const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

export const modelList = (raw: string | undefined): string[] | null => {
  const models = (raw ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  return models.length === 0 || models.includes('*') ? null : models;
};

/** PROXY_TENANT_POLICIES: a JSON object, tenant id → { models?, maxN?, maxTokens?, tools? }. */
export const tenantPolicySchema = z.strictObject({
  models: z.union([z.array(z.string().min(1).max(256)).max(1000), z.literal('*')]).optional(),
  maxN: z.number().int().min(1).max(128).optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  tools: z.boolean().optional(),
});

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    // Intl throws RangeError for unknown zones; that is the answer, not an error to propagate.
    return false;
  }
}
