/**
 * The bounds of the exchange indexer's work, pure: what one text may cost the embedder, how many
 * lines one embedding chunk takes, and in which order users get their chunks. The offline e5
 * server does not truncate: a text past the model's 512 tokens is embedded window by window, so a
 * long line costs several passes for words the vector barely reflects.
 */

/** Content tokens e5 reads in one pass: 512 less its two special tokens and the "passage: " prefix. */
export const MODEL_READ_TOKENS = 500;

/** Estimated tokens one embedding chunk may cost: a few seconds of the shared embedder, so the activity heartbeats well inside its timeout. */
export const CHUNK_TOKENS = 8_000;

/** Estimated tokens one user's lines may cost per indexer run: the rest waits for the next run, behind the other users. */
export const USER_TOKENS_PER_RUN = 48_000;

// Ideographs, kana, hangul and pictographs cost up to a token each (rare ideographs and emoji a
// whole one); every other script's words cost about a token per three to four characters.
const DENSE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Extended_Pictographic}]/u;
const SPARSE_WEIGHT = 1 / 3;

/** An upper estimate of the tokens e5 makes of `text` (no tokenizer here: the server owns it). */
export function estimateTokens(text: string): number {
  let total = 0;
  for (const ch of text) total += DENSE.test(ch) ? 1 : SPARSE_WEIGHT;
  return Math.ceil(total);
}

/** `text` cut to what the model reads in one pass, by the estimate: nothing past it changes the vector much, and it would cost another pass. */
export function cutToModel(text: string, maxTokens: number = MODEL_READ_TOKENS): string {
  let total = 0;
  let end = 0;
  for (const ch of text) {
    total += DENSE.test(ch) ? 1 : SPARSE_WEIGHT;
    if (total > maxTokens) return text.slice(0, end);
    end += ch.length;
  }
  return text;
}

/**
 * How many of `lines` (in seq order) one chunk takes: the longest prefix whose estimated cost
 * stays within `maxTokens`, at least one line so a chunk always moves the watermark. A line costs
 * its own vector and its share of its pair's, each cut to what the model reads.
 */
export function chunkLength(lines: readonly { content: string }[], maxTokens: number = CHUNK_TOKENS): number {
  let used = 0;
  for (let i = 0; i < lines.length; i++) {
    used += lineCost(lines[i]!.content);
    if (used > maxTokens) return Math.max(1, i);
  }
  return lines.length;
}

/** Estimated embedding cost of one line: its line vector and, at most, a whole pair vector. */
export function lineCost(content: string): number {
  return 2 * estimateTokens(cutToModel(content.trim()));
}

/**
 * Owed conversations grouped by user, the users in order of first appearance: the indexer takes
 * one chunk of each user's current conversation per round, so a user with a long backlog holds
 * nobody else's new lines behind it.
 */
export function byUser<T extends { userId: string }>(owed: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const c of owed) {
    const group = groups.get(c.userId);
    if (group) group.push(c);
    else groups.set(c.userId, [c]);
  }
  return [...groups.values()];
}
