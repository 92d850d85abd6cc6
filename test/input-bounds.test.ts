import { describe, expect, it } from 'vitest';
import { createMemoryBody, JSON_BOUNDS, jsonBoundsIssue, messageIdSchema, recallBody, userIdSchema } from '../src/api/schemas';
import { MEMORY_TYPES } from '../src/core/types';
import { ALL_ROUTES } from '../src/core/recall/routes';
import { encodeKeyPart } from '../src/core/conversation/message-ids';
import { candidateKey } from '../src/conversation/extraction';
import type { MemoryCandidate } from '../src/core/types';

describe('client-chosen ids', () => {
  it('take ASCII letters, digits and . _ @ - only, starting with a letter or digit, 1–128 long', () => {
    for (const ok of ['alice', 'A.b_c@d-1', 'u_ho_a', 'c1-m2', '0', 'x'.repeat(128), 'alice@example.com']) expect(userIdSchema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ['', 'a:b', 'a/b', 'a%2Fb', 'a\nb', 'a\n', 'a b', 'été', 'ａ', 'a\u0000', '.hidden', '-flag', '_x', 'x'.repeat(129), 'a\u200bb'])
      expect(userIdSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });

  it('take message ids as chat platforms make them: any printable id up to 256 characters', () => {
    for (const ok of ['m1', '$abc:server.org', 'conv:42:msg:7', 'a/b+c', 'a%2Fb', 'a b', 'été', '消息-1', '🙂', '.hidden', 'x'.repeat(256)])
      expect(messageIdSchema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ['', 'a\nb', 'a\tb', 'a\u0000', 'a\u007f', 'a\u0085', 'a\u200bb', 'a\u2028b', 'a\ud800', '\ue000', ' m1', 'm1 ', 'x'.repeat(257)])
      expect(messageIdSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});

describe('message ids inside keys', () => {
  it('encode to themselves when made of letters, digits and . _ @ -, so keys made before stay the same', () => {
    for (const id of ['m1', 'Msg.1_x@y-z', 'alice@example.com']) expect(encodeKeyPart(id)).toBe(id);
  });

  it('cannot forge a separator: different ids, and different lists of ids, give different keys', () => {
    const ids = ['a,b', 'a', 'b', 'a:b', 'a%2Cb', 'a%252Cb', '$abc:server.org', 'été', 'a/b+c'];
    const encoded = ids.map(encodeKeyPart);
    expect(new Set(encoded).size).toBe(ids.length);
    for (const e of encoded) expect(e).toMatch(/^[\w.@%-]+$/);
    expect([['a,b']].map((l) => l.map(encodeKeyPart).join(','))[0]).not.toBe(['a', 'b'].map(encodeKeyPart).join(','));
    const msg = (messageIds: string[]) => ({ text: 'I like tea', type: 'preference', intent: 'statement', messageIds }) as unknown as MemoryCandidate;
    expect(candidateKey('t:u', 'c1', msg(['a,b']))).not.toBe(candidateKey('t:u', 'c1', msg(['a', 'b'])));
    expect(candidateKey('t:u', 'c1', msg(['m1', 'm2']))).toMatch(/^extract:t:u:c1:m1,m2:[0-9a-f]{16}$/);
  });
});

describe('free-form JSON bounds', () => {
  it('accepts ordinary metadata', () => {
    expect(jsonBoundsIssue({ source: 'import', tags: ['a', 'b'], score: 0.5, ok: true, none: null, nested: { deeper: { deepest: 1 } } })).toBeUndefined();
    expect(jsonBoundsIssue({})).toBeUndefined();
  });

  it('names the first bound broken and where', () => {
    expect(jsonBoundsIssue({ a: { b: { c: { d: {} } } } })).toMatchObject({ path: ['a', 'b', 'c', 'd'], message: expect.stringContaining('levels deep') });
    expect(jsonBoundsIssue({ a: [[[[1]]]] })).toMatchObject({ path: ['a', 0, 0, 0] });
    expect(jsonBoundsIssue(Object.fromEntries(Array.from({ length: JSON_BOUNDS.maxKeysPerObject + 1 }, (_, i) => [`k${i}`, i])))).toMatchObject({ path: [], message: expect.stringContaining('keys') });
    expect(jsonBoundsIssue({ list: Array.from({ length: JSON_BOUNDS.maxArrayItems + 1 }, () => 1) })).toMatchObject({ path: ['list'] });
    expect(jsonBoundsIssue({ s: 'x'.repeat(JSON_BOUNDS.maxStringLength + 1) })).toMatchObject({ path: ['s'] });
    expect(jsonBoundsIssue({ ['k'.repeat(JSON_BOUNDS.maxKeyLength + 1)]: 1 })).toMatchObject({ message: expect.stringContaining('keys must be') });
    expect(jsonBoundsIssue({ '': 1 })).toMatchObject({ message: expect.stringContaining('keys must be') });
    expect(jsonBoundsIssue({ s: 'a\u0000b' })).toMatchObject({ path: ['s'], message: expect.stringContaining('control') });
    expect(jsonBoundsIssue({ s: '\ud800' })).toMatchObject({ path: ['s'] });
    // Every string within bounds, the whole too large (multi-byte characters count as bytes).
    expect(jsonBoundsIssue(Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`k${i}`, '话'.repeat(1000)])))).toMatchObject({ path: [], message: expect.stringContaining('bytes') });
  });

  it('reaches the memory body schema as a 400-worthy issue under metadata', () => {
    const result = createMemoryBody.safeParse({ text: 'x', type: 'fact', metadata: { a: { b: { c: { d: { e: 1 } } } } } });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({ path: ['metadata', 'a', 'b', 'c', 'd'], message: expect.stringMatching(/^metadata: /) });
  });
});

describe('recall filters', () => {
  it('take at most one entry per memory type and per route, not an array the size of the body', () => {
    expect(recallBody.safeParse({ query: 'x', types: [...MEMORY_TYPES], routes: [...ALL_ROUTES] }).success).toBe(true);
    expect(recallBody.safeParse({ query: 'x', types: Array<string>(100_000).fill('fact') }).success).toBe(false);
    expect(recallBody.safeParse({ query: 'x', routes: Array<string>(20_000).fill('ann') }).success).toBe(false);
  });
});
