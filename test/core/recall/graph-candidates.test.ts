import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { candidateKeys, canonicalEntity, MAX_CANDIDATE_KEYS, matchQueryEntities, queryKinship } from '../../../src/core/recall/graph';
import { MAX_QUERY_CODE_POINTS } from '../../../src/core/recall/sanitize-query';

// The matching before the index lookup (a scan of every entity name against the query), kept here
// as the oracle the candidate keys must reproduce.
const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c) && !/\p{Script=Han}/u.test(c);
function mentions(hay: string, needle: string): boolean {
  if (needle.length === 0) return false;
  const latin = /[a-z0-9]/u.test(needle);
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1)) {
    if (!latin) return true;
    if (!isWordChar(hay[at - 1]) && !isWordChar(hay[at + needle.length])) return true;
  }
  return false;
}
function scanMatch(query: string, entities: readonly { id: string; name: string }[]): Map<string, string[]> {
  const q = query.toLowerCase();
  const kin = queryKinship(query);
  const groups = new Map<string, string[]>();
  for (const e of entities) {
    const key = canonicalEntity(e.name);
    if (['user', 'i', 'me', '我'].includes(key)) continue;
    const hit = key.startsWith('kin:') ? kin.has(key) : key.length >= 2 && mentions(q, key);
    if (!hit) continue;
    groups.set(key, [...(groups.get(key) ?? []), e.id]);
  }
  return groups;
}

const fixtureNames = readFileSync(new URL('../../fixtures/entity-aliases/pairs.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim().length > 0)
  .flatMap((l) => {
    const p = JSON.parse(l) as { a: string; b: string };
    return [p.a, p.b];
  });
const names = [
  ...new Set([
    ...fixtureNames,
    '姐姐', 'sister', 'cat', 'Berlin', 'user', '杭州', '西湖', '火锅', 'New York', 'new york city', 'Rust', 'C++', 'node.js', 'iPhone手机', '手机',
    'Dr. Lee', "Tom's", 'my boss', '哥伦比亚', 'москва', '서울', 'すし', 'a', 'I', 'me', '我', 'catalogue', 'mom', '我妈', '老王', 'x手机', '手机pro',
  ]),
].map((name, i) => ({ id: String(i), name }));

const queries = [
  'Did my sister like the education system in Berlin?',
  '我去杭州找我的妹妹',
  'what do my sister and I both like',
  '我妈和我姐周末去哪了',
  '哥伦比亚咖啡好喝吗',
  'a drama about momentum',
  'I moved to New York City last year, and my mom visits',
  'is the catalogue out? my cat knows',
  'Rust or C++ or node.js for the backend',
  'my iPhone手机坏了',
  'iphone手机pro好用吗',
  '老王说西湖边的火锅不错',
  'Tom\'s bike, my boss and Dr. Lee',
  'поездка в москва и 서울에 가고 싶어, すしが好き',
  'nothing here at all',
  '我想我妈了',
  'kin:sister',
];

describe('candidate keys of a query', () => {
  it('match exactly the entities the scan of every name matched, on every labelled name and query', () => {
    for (const q of queries) expect(Object.fromEntries(matchQueryEntities(q, names)), q).toEqual(Object.fromEntries(scanMatch(q, names)));
  });

  it('zh: Han substrings of two characters and more, and kinship only after a possessive', () => {
    const keys = candidateKeys('我妹在杭州');
    expect(keys).toContain('kin:sister');
    expect(keys).toContain('杭州');
    expect(keys).toContain('妹在杭州');
    expect(keys).not.toContain('杭');
    expect(candidateKeys('哥伦比亚')).not.toContain('kin:brother');
  });

  it('en: whole words and runs of words, never part of a word, never the speaker', () => {
    const keys = candidateKeys('My cat loves New York');
    expect(keys).toEqual(expect.arrayContaining(['cat', 'new york', 'loves new york', 'my cat loves new york']));
    expect(keys).not.toContain('ca');
    expect(keys).not.toContain('ew york');
    expect(keys).not.toContain('new york ');
    expect(candidateKeys('I and me')).not.toEqual(expect.arrayContaining(['i']));
    expect(candidateKeys('what about my sister')).toContain('kin:sister');
  });

  it('mixed: a Latin key ends at a word boundary, a Han key anywhere', () => {
    const keys = candidateKeys('my iPhone手机pro');
    expect(keys).toEqual(expect.arrayContaining(['iphone', '手机', 'iphone手机pro', 'my iphone']));
    // "pro" touches "机" only on its Han side, but "手机pro" and "iphone手机" each cut a Latin word.
    expect(keys).not.toContain('phone手机');
    expect(keys).not.toContain('手机pro');
    expect(keys).not.toContain('iphone手机');
    expect(candidateKeys('去买手机pro')).toContain('手机pro');
  });

  it('kinship: the keys of every relative named, in zh and en', () => {
    const keys = candidateKeys('我妈和my dad');
    expect(keys).toEqual(expect.arrayContaining(['kin:mother', 'kin:father']));
  });

  it('stays bounded for the longest query the sanitiser lets through', () => {
    const zh = '我妹妹去年搬到了杭州西湖边'.repeat(200).slice(0, MAX_QUERY_CODE_POINTS);
    const en = 'my sister moved to new york city last year '.repeat(60).slice(0, MAX_QUERY_CODE_POINTS);
    for (const q of [zh, en, `${zh.slice(0, 1000)}${en.slice(0, 1000)}`]) {
      const keys = candidateKeys(q);
      expect(keys.length).toBeLessThanOrEqual(MAX_CANDIDATE_KEYS);
      expect(keys.every((k) => k.length <= 64)).toBe(true);
    }
    // Repeated text gives few distinct keys: a repeated name is still found.
    expect(candidateKeys(zh)).toContain('杭州');
  });
});
