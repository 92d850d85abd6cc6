import { describe, expect, it } from 'vitest';
import { createMemoryBody, JSON_BOUNDS, jsonBoundsIssue, messageIdSchema, userIdSchema } from '../src/api/schemas';

describe('client-chosen ids', () => {
  it('take ASCII letters, digits and . _ @ - only, starting with a letter or digit, 1–128 long', () => {
    for (const ok of ['alice', 'A.b_c@d-1', 'u_ho_a', 'c1-m2', '0', 'x'.repeat(128), 'alice@example.com']) expect(userIdSchema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ['', 'a:b', 'a/b', 'a%2Fb', 'a\nb', 'a\n', 'a b', 'été', 'ａ', 'a\u0000', '.hidden', '-flag', '_x', 'x'.repeat(129), 'a\u200bb'])
      expect(messageIdSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
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
