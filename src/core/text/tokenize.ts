/**
 * Tokenisation for the keyword (BM25) route over mixed Chinese / English memory text.
 *
 * The same function must be used for documents and queries, otherwise terms never meet.
 * Chinese runs go through the segmenter's search mode (which also emits the sub-words of long
 * words, so "中华人民共和国" matches a query for "人民"); Latin/number runs are handled here so
 * that identifiers such as "payment-svc" survive whole as well as in parts.
 *
 * Pure: the segmenter is a parameter. Outside core, `tokenizeForIndex` in
 * src/adapters/text/jieba.ts is this function bound to jieba (use cases import it from
 * src/shared/segmentation.ts).
 */
import type { Segmenter } from './segmenter';
import { englishStem } from './stem';

/**
 * Words that carry no retrieval signal in either language. Deliberately small: over-eager
 * stopword lists remove things like "不" (negation) that change a memory's meaning.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  // zh
  '的', '了', '是', '我', '你', '他', '她', '它', '们', '我们', '你们', '他们', '吗', '呢', '啊', '吧',
  '呀', '哦', '嗯', '啦', '嘛', '着', '过', '和', '与', '及', '或', '也', '都', '就', '在', '把', '被',
  '给', '这', '那', '这个', '那个', '一个', '有', '个', '之', '而', '并', '很', '又', '还',
  // en
  'the', 'a', 'an', 'is', 'are', 'was', 'were', 'be', 'been', 'being', 'am', 'to', 'of', 'and', 'or',
  'in', 'on', 'at', 'for', 'with', 'by', 'from', 'as', 'i', 'you', 'he', 'she', 'it', 'we', 'they',
  'my', 'me', 'your', 'our', 'his', 'her', 'its', 'their', 'this', 'that', 'these', 'those', 'do',
  'does', 'did', 'have', 'has', 'had', 'will', 'would', 'can', 'could', 'should', 'so', 'than',
  'then', 'there', 'what', 'which', 'who', 'whom', 'if', 'but', 'about', 'into', 'just', 'also',
  "i'm", "it's", "don't",
]);

/**
 * A run of "western" word characters (Latin, Greek, Cyrillic letters, digits, combining marks)
 * optionally joined by identifier connectors (- _ . ' / none other), plus the "c++"/"c#" suffix.
 * Han characters are excluded so Chinese text between such runs goes to jieba.
 */
const WESTERN_RUN =
  /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{M}0-9]+(?:[-_.'][\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{M}0-9]+)*(?:\+\+|#)?/gu;

const CONNECTOR = /[-_.']/u;
const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;
/** "3.14", "1.000.000", "2026-01-01": the parts of a number are noise, only the whole is kept. */
const NUMERIC_COMPOUND = /^\d+(?:[.,]\d+)+$/u;

/** Normalisation shared by documents and queries: NFKC folds full-width forms ("Ｈｅｌｌｏ", "１２３"). */
function normalise(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

function keep(token: string): boolean {
  return HAS_WORD_CHAR.test(token) && !STOPWORDS.has(token);
}

function westernTokens(run: string, out: string[]): void {
  if (!CONNECTOR.test(run) || NUMERIC_COMPOUND.test(run)) {
    if (keep(run)) out.push(run);
    return;
  }
  // Identifier: keep it whole (exact match on "payment-svc") and its parts (match on "payment").
  if (keep(run)) out.push(run);
  // "don't" / "user's": the apostrophe form is one word, its fragments are noise.
  if (/^[^'\-._]*'[^\-._]*$/u.test(run)) return;
  for (const part of run.split(/[-_.']+/u)) {
    if (part.length > 0 && keep(part)) out.push(part);
  }
}

function otherTokens(segment: string, segmenter: Segmenter, out: string[]): void {
  if (!HAS_WORD_CHAR.test(segment)) return;
  for (const raw of segmenter.cutForSearch(segment)) {
    const token = raw.trim();
    if (token.length > 0 && keep(token)) out.push(token);
  }
}

/**
 * Splits text into index terms for BM25: lowercased, NFKC-normalised, punctuation, whitespace,
 * emoji and stopwords dropped, numbers kept, identifiers kept whole and split
 * ("payment-svc" → "payment-svc", "payment", "svc"). Chinese uses the segmenter's search mode,
 * so long words also yield their dictionary sub-words. Duplicates are kept (they are term
 * frequency).
 */
export function indexTokens(text: string, segmenter: Segmenter): string[] {
  const normalised = normalise(text);
  const out: string[] = [];
  let last = 0;
  for (const match of normalised.matchAll(WESTERN_RUN)) {
    const start = match.index;
    if (start > last) otherTokens(normalised.slice(last, start), segmenter, out);
    westernTokens(match[0], out);
    last = start + match[0].length;
  }
  if (last < normalised.length) otherTokens(normalised.slice(last), segmenter, out);
  return out;
}

/**
 * The BM25 analysis of `text`: {@link indexTokens} with each English word replaced by its Porter2
 * stem ("painted", "painting" → "paint"), for documents and queries alike, so "painting" finds a
 * document that says "painted". Every word stays one term, so no query word weighs more than
 * another for having a stem. A word whose stem is a stopword ("having" → "have") keeps its form.
 * Postings written before stemming are re-posted by migration 1797200000000 (docs/decisions.md,
 * "English stems").
 */
export function analyzeForIndex(text: string, segmenter: Segmenter): string[] {
  return toStems(indexTokens(text, segmenter));
}

/** `tokens` with each English word replaced by its stem (see {@link analyzeForIndex}). */
export function toStems(tokens: readonly string[]): string[] {
  return tokens.map((token) => {
    const stem = englishStem(token);
    return stem.length > 0 && !STOPWORDS.has(stem) ? stem : token;
  });
}

/** Counts each term's occurrences (the tf of BM25). */
export function termFrequencies(tokens: readonly string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1);
  return tf;
}
