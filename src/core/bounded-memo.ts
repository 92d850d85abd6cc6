/**
 * A pure function of a string (or a number), its answers remembered: recall asks the same small questions of
 * the same memories on every message of a conversation (a token count, a date in a zone, whether
 * a text is small talk). At most `limit` answers are kept, all forgotten at once past it, since
 * forgetting only costs computing again; keys `worthKeeping` refuses (long texts) are computed
 * every time.
 */
export function boundedMemo<V, K extends string | number = string>(limit: number, compute: (key: K) => V, worthKeeping: (key: K) => boolean = () => true): (key: K) => V {
  const answers = new Map<K, V>();
  return (key) => {
    const known = answers.get(key);
    if (known !== undefined || answers.has(key)) return known as V;
    const answer = compute(key);
    if (worthKeeping(key)) {
      if (answers.size >= limit) answers.clear();
      answers.set(key, answer);
    }
    return answer;
  };
}

/**
 * {@link boundedMemo} for a function of a scope and a number (a date in a zone), keyed by the scope
 * and then the number itself: a key string made of the two cost as much to build and hash as the
 * rest of the lookup. At most `limit` answers over all scopes together, all forgotten at once past
 * it, so many scopes cannot each hold `limit`.
 */
export function boundedScopedMemo<V>(limit: number, compute: (scope: string, key: number) => V): (scope: string, key: number) => V {
  const byScope = new Map<string, Map<number, V>>();
  let kept = 0;
  return (scope, key) => {
    let answers = byScope.get(scope);
    const known = answers?.get(key);
    if (known !== undefined || answers?.has(key)) return known as V;
    const answer = compute(scope, key);
    if (kept >= limit) {
      byScope.clear();
      kept = 0;
      answers = undefined;
    }
    if (!answers) byScope.set(scope, (answers = new Map()));
    answers.set(key, answer);
    kept++;
    return answer;
  };
}

/**
 * Texts worth remembering by the memos of recall's texts: up to 512 characters, a memory's line.
 * A longer text is seldom asked about twice and would hold its length in the memo.
 */
export function isShortText(text: string): boolean {
  return text.length <= 512;
}
