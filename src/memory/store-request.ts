import type { StoreMemoryInput } from './contract';

/** The fields of a store request that decide what is written, as a client sent them. */
export type StoreRequestFields = Pick<StoreMemoryInput, 'text' | 'type' | 'scope' | 'confidence' | 'importance' | 'keywords' | 'metadata' | 'expiresAt' | 'via'> & { at?: string };

/** JSON with object keys sorted at every depth, so two serialisations of one value are one string. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A time as the write reads it: one instant, whatever offset or precision the client wrote it in. */
const instant = (iso: string | undefined): string | undefined => (iso === undefined ? undefined : new Date(iso).toISOString());

/**
 * What makes two store requests under one request id "the same request": the fields that decide
 * the write, canonically serialised (the caller keys a hash of it, so no plain digest of a user's
 * words, against which a guess could be checked, is kept anywhere). A field the client left out
 * stays out (the server fills it: `at` with the time of arrival, type and scope by inference), so
 * a retry that omits `at` like the first matches, while one that adds a time the first did not
 * give does not. Times compare as instants, `metadata` whatever its key order, `keywords` in their
 * order (as they are stored), the text exactly (after the schema's trim). `via` counts: it decides
 * how far the memory is trusted. The request id is not part of it: it names the request.
 */
export function canonicalStoreRequest(fields: StoreRequestFields): string {
  return canonicalJson({
    text: fields.text,
    type: fields.type,
    scope: fields.scope,
    confidence: fields.confidence,
    importance: fields.importance,
    keywords: fields.keywords,
    metadata: fields.metadata,
    expiresAt: instant(fields.expiresAt),
    at: instant(fields.at),
    via: fields.via ?? 'api',
  });
}
