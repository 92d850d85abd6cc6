import { createHash } from 'node:crypto';
import type { ContentTag } from '../core/text/prompt-data';

/**
 * Deterministic UUID (RFC 9562 version 8 layout) from a key, so a retried activity or a re-run
 * extraction produces the same memory id and cannot create a second row.
 */
export function uuidFromKey(key: string): string {
  const h = createHash('sha256').update(key).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Deterministic id: the same conversation-day is the same episode however often it is written. */
export function episodeId(userId: string, conversationId: string, day: string): string {
  return uuidFromKey(`episode:${userId}:${conversationId}:${day}`);
}

export function shortHash(text: string, length = 16): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** The tag of a prompt's data block (src/core/text/prompt-data.ts): 12 hex digits of SHA-256. */
export const contentTag: ContentTag = (content) => shortHash(content, 12);
