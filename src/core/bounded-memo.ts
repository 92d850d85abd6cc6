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
 * Texts worth remembering by the memos of recall's texts: up to 512 characters, a memory's line.
 * A longer text is seldom asked about twice and would hold its length in the memo.
 */
export function isShortText(text: string): boolean {
  return text.length <= 512;
}
