/**
 * Graph recall (seed 003), the pure half: which of the user's entities a query names (bilingual
 * kinship aliases, possessive forms), and how the per-entity walks are combined so that every
 * entity of a two-part question ("what do my sister and I both like") gets its evidence into the
 * candidate list, not only the entity with the most memories.
 */

/**
 * Kinship terms, zh and en, to one key each. Not a translation table: only the relatives a user
 * talks about, so "我妈", "my mom" and "mother" are one node. 姐姐/妹妹 both map to "sister" because
 * English does not say which.
 */
const KINSHIP: Readonly<Record<string, readonly string[]>> = {
  mother: ['mother', 'mom', 'mum', 'mommy', 'mama', '妈妈', '母亲', '老妈', '妈', '娘'],
  father: ['father', 'dad', 'daddy', 'papa', '爸爸', '父亲', '老爸', '爸', '爹'],
  parents: ['parents', 'folks', '父母', '爸妈', '爹妈'],
  sister: ['sister', 'sis', '姐姐', '妹妹', '姐', '妹', '姊'],
  brother: ['brother', 'bro', '哥哥', '弟弟', '哥', '弟'],
  wife: ['wife', '老婆', '妻子', '太太', '媳妇', '夫人'],
  husband: ['husband', '老公', '丈夫'],
  partner: ['partner', 'spouse', '爱人', '对象', '伴侣'],
  girlfriend: ['girlfriend', 'gf', '女朋友', '女友'],
  boyfriend: ['boyfriend', 'bf', '男朋友', '男友'],
  son: ['son', '儿子'],
  daughter: ['daughter', '女儿', '闺女'],
  child: ['child', 'children', 'kid', 'kids', 'baby', '孩子', '小孩', '宝宝', '娃'],
  grandmother: ['grandmother', 'grandma', 'granny', 'nana', '奶奶', '外婆', '姥姥'],
  grandfather: ['grandfather', 'grandpa', 'granddad', '爷爷', '外公', '姥爷'],
  family: ['family', '家人', '家里人'],
};

const ALIAS = new Map<string, string>(Object.entries(KINSHIP).flatMap(([key, words]) => words.map((w) => [w, `kin:${key}`] as const)));
/** Single Han characters that are kinship only next to a possessive (我妈, 我的姐): alone they occur inside other words (哥伦比亚). */
const ZH_SHORT = [...ALIAS.keys()].filter((w) => /^\p{Script=Han}$/u.test(w));
const ZH_LONG = [...ALIAS.keys()].filter((w) => /^\p{Script=Han}{2,}$/u.test(w));
const ZH_POSSESSOR = ['我的', '我们的', '我', '咱', '俺'];
const EN_POSSESSIVE_PREFIX = /^(?:my|our|your)\s+/u;
const ZH_POSSESSIVE_PREFIX = /^(?:我们的|我的|我们|咱们|[咱俺我])/u;
const EN_POSSESSIVE_SUFFIX = /['’]s$/u;

/** The node an entity name stands for: a kinship key, else the trimmed lower-cased name without a possessive. */
export function canonicalEntity(name: string): string {
  let n = name.trim().toLowerCase().replace(/\s+/gu, ' ');
  n = n.replace(EN_POSSESSIVE_PREFIX, '').replace(EN_POSSESSIVE_SUFFIX, '');
  const zh = n.replace(ZH_POSSESSIVE_PREFIX, '');
  const kin = ALIAS.get(n) ?? (zh.length > 0 ? ALIAS.get(zh) : undefined);
  if (kin) return kin;
  return n;
}

const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c) && !/\p{Script=Han}/u.test(c);

/** Whether `needle` (lower case) occurs in `hay` (lower case) as a whole word for Latin text, anywhere for Han text. */
function mentions(hay: string, needle: string): boolean {
  if (needle.length === 0) return false;
  const latin = /[a-z0-9]/u.test(needle);
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1)) {
    if (!latin) return true;
    if (!isWordChar(hay[at - 1]) && !isWordChar(hay[at + needle.length])) return true;
  }
  return false;
}

/** The kinship keys a query names ("my sister and I", "我妈和我姐"). */
export function queryKinship(query: string): Set<string> {
  const q = query.toLowerCase();
  const keys = new Set<string>();
  for (const [word, key] of ALIAS) {
    if (/^[a-z]+$/u.test(word)) {
      if (mentions(q, word)) keys.add(key);
    }
  }
  for (const word of ZH_LONG) if (q.includes(word)) keys.add(ALIAS.get(word)!);
  for (const word of ZH_SHORT) if (ZH_POSSESSOR.some((p) => q.includes(p + word))) keys.add(ALIAS.get(word)!);
  return keys;
}

/** Names too generic to start a walk from: the speaker node and one-letter tokens. */
export const NOT_A_SEED: ReadonlySet<string> = new Set(['user', 'i', 'me', '我']);

/** Most Han characters in one candidate (names of places, people, dishes are shorter). */
export const MAX_HAN_CANDIDATE = 8;
/** Most tokens in one candidate (an ASCII word, or any other single character): "new york city" is five, "서울역" three. */
export const MAX_CANDIDATE_TOKENS = 12;
/** Longest candidate in UTF-16 units: a name longer than this is not looked up. */
export const MAX_CANDIDATE_LENGTH = 64;
/** Candidates per query, earliest first: bounds the lookup even for a query at the sanitiser's 2,000 code points. */
export const MAX_CANDIDATE_KEYS = 4000;

const isHan = (c: string): boolean => /^\p{Script=Han}$/u.test(c);

/**
 * The query cut where a key may start or end: runs of ASCII letters and digits are one token (a
 * Latin key holds whole words only), every other character is one (a key without ASCII letters —
 * Han, kana, Hangul — may start and end anywhere).
 */
function tokens(q: string): { at: number; end: number; han: boolean }[] {
  const out: { at: number; end: number; han: boolean; ascii: boolean }[] = [];
  let at = 0;
  for (const c of q) {
    const ascii = /^[a-z0-9]$/u.test(c);
    const last = out[out.length - 1];
    if (ascii && last?.ascii) last.end += c.length;
    else out.push({ at, end: at + c.length, han: isHan(c), ascii });
    at += c.length;
  }
  return out;
}

/**
 * Every canonical key the query could name, for an index lookup instead of a scan of the user's
 * entities: the kinship keys it speaks of, and its spans that a name would match — at least two
 * units, a whole word at both ends when the span holds ASCII letters or digits, anywhere when it
 * does not (Han). Bounded: at most {@link MAX_CANDIDATE_TOKENS} tokens, {@link MAX_HAN_CANDIDATE}
 * Han characters and {@link MAX_CANDIDATE_LENGTH} units a span, {@link MAX_CANDIDATE_KEYS} keys in all.
 */
export function candidateKeys(query: string): string[] {
  const q = query.toLowerCase();
  const keys = new Set<string>(queryKinship(query));
  const toks = tokens(q);
  for (let i = 0; i < toks.length && keys.size < MAX_CANDIDATE_KEYS; i++) {
    const from = toks[i]!.at;
    // A key never starts or ends with a space (names are trimmed).
    if (/^\s$/u.test(q[from]!)) continue;
    let han = 0;
    for (let j = i; j < toks.length && j - i < MAX_CANDIDATE_TOKENS && keys.size < MAX_CANDIDATE_KEYS; j++) {
      const to = toks[j]!.end;
      if (to - from > MAX_CANDIDATE_LENGTH) break;
      if (toks[j]!.han && ++han > MAX_HAN_CANDIDATE) break;
      if (to - from < 2 || /^\s$/u.test(q[to - 1]!)) continue;
      const key = q.slice(from, to);
      if (NOT_A_SEED.has(key) || key.startsWith('kin:')) continue;
      // A Latin key is a whole word at both ends: "cat" is not in "catalogue", "手机pro" not in "iphone手机pro".
      if (/[a-z0-9]/u.test(key) && (isWordChar(q[from - 1]) || isWordChar(q[to]))) continue;
      keys.add(key);
    }
  }
  return [...keys];
}

/**
 * The user's entities the query names, grouped by node (one group per thing the query is about):
 * kinship through the alias table, other entities when their name occurs in the query (whole word
 * for Latin names, at least two characters for Han names), i.e. when their canonical key is one of
 * the query's {@link candidateKeys}. Groups keep the order of `entities`.
 */
export function matchQueryEntities(query: string, entities: readonly { id: string; name: string; key?: string }[]): Map<string, string[]> {
  const candidates = new Set(candidateKeys(query));
  const groups = new Map<string, string[]>();
  for (const e of entities) {
    const key = e.key ?? canonicalEntity(e.name);
    if (NOT_A_SEED.has(key) || !candidates.has(key)) continue;
    const ids = groups.get(key) ?? [];
    ids.push(e.id);
    groups.set(key, ids);
  }
  return groups;
}

/** One memory reached from one seed group, `hop` entity steps away (0: the memory names the seed). */
export interface GraphHit {
  memoryId: string;
  seed: string;
  hop: number;
}

/**
 * Decomposition without an LLM: each seed's memories in walk order (nearest first), then taken in
 * turn, one per seed, nearer hops of every seed before farther hops of any, so a question joining
 * two things has both things' evidence at the head of the list.
 */
export function interleaveBySeed(hits: readonly GraphHit[], k: number): string[] {
  const bySeed = new Map<string, GraphHit[]>();
  for (const h of hits) {
    const list = bySeed.get(h.seed) ?? [];
    list.push(h);
    bySeed.set(h.seed, list);
  }
  const queues = [...bySeed.values()].map((l) => [...l].sort((a, b) => a.hop - b.hop));
  const out: string[] = [];
  const seen = new Set<string>();
  const maxHop = Math.max(0, ...hits.map((h) => h.hop));
  for (let hop = 0; hop <= maxHop && out.length < k; hop++) {
    let progressed = true;
    while (progressed && out.length < k) {
      progressed = false;
      for (const q of queues) {
        while (q.length > 0 && q[0]!.hop === hop && seen.has(q[0]!.memoryId)) q.shift();
        const next = q[0];
        if (!next || next.hop !== hop) continue;
        q.shift();
        seen.add(next.memoryId);
        out.push(next.memoryId);
        progressed = true;
        if (out.length >= k) break;
      }
    }
  }
  return out;
}

/** The read side of the graph recall reads (scoped by user in every query). */
export interface GraphRecallSource {
  /**
   * The user's entities whose canonical key is one of `keys` (an index lookup: the cost follows the
   * query, not the number of entities), those on active memories first, then by name, at most `limit`.
   */
  entitiesByKey(input: { userId: string; keys: readonly string[]; limit: number }): Promise<{ id: string; name: string; key: string }[]>;
  /** Active memories reached from each seed group within `hops` steps (relations and co-mention), nearest first. */
  walk(input: { userId: string; seeds: Map<string, string[]>; hops: number; k: number; now: Date }): Promise<GraphHit[]>;
}
