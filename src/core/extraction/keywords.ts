/**
 * Content-word keywords for BM25-style matching: the segmenter's words for Chinese (with their POS
 * tags to drop function words), lowercase words minus stopwords for English, and Latin tokens
 * such as "payment-svc", "Next.js" or "P99" kept whole in both.
 */
import type { Segmenter } from '../text/segmenter';
import { EN_STOPWORDS, ZH_STOPWORDS } from './lexicon';
import type { Lang } from './text';

/** POS tags that never carry content: pronouns, particles, prepositions, conjunctions, adverbs, numerals… */
const FUNCTION_TAGS = /^(?:[rpcdxyqfeowmt]|u\w*|zg|df|ul|uj)$/u;
const LATIN_TOKEN = /[A-Za-z][A-Za-z0-9]*(?:[.\-_+#/][A-Za-z0-9]+)*\+*#?|(?<!\d)\d+[A-Za-z]\w*|(?<!\d)\d+(?:-\d+){1,4}/gu;
const COUNT_WORD = /^[\d一二三四五六七八九十两几百千万半每]+[个只条位次天年月号点秒分块岁本部件遍回]?$/u;

/** Latin tokens of a text, as written ("payment-svc", "Next.js", "C++", "P99", "4-7-8"). */
export function latinTokens(text: string): string[] {
  return [...text.matchAll(LATIN_TOKEN)].map((m) => m[0].replace(/(?<![./-])[./-]+$/u, ''));
}

function zhKeywords(text: string, segmenter: Segmenter): string[] {
  const out: string[] = [];
  const words = segmenter.tag(text.replace(LATIN_TOKEN, ' '));
  for (let i = 0; i < words.length; i += 1) {
    const w = words[i];
    if (!w) continue;
    let word = w.word.trim();
    // jieba splits some compounds into single-character nouns ("官/网"); glue those back together.
    while (word.length === 1 && /^n/u.test(w.tag) && /^n/u.test(words[i + 1]?.tag ?? '') && (words[i + 1]?.word.length ?? 0) === 1) {
      word += words[i + 1]?.word ?? '';
      i += 1;
    }
    if (!/\p{Script=Han}/u.test(word) || ZH_STOPWORDS.has(word)) continue;
    // HMM-discovered words come back tagged "x" like punctuation; Han ones are real words ("官网").
    const discovered = w.tag === 'x' && word.length >= 2 && !/^[我你他她它这那]|[是的了吗呢]$/u.test(word);
    const contentTag = !FUNCTION_TAGS.test(w.tag) || discovered || (w.tag === 'm' && !COUNT_WORD.test(word));
    if (!contentTag) continue;
    // Single characters are mostly function words; keep nouns and adjectives ("猫", "慢").
    if (word.length === 1 && !/^(?:n|a|ng|vn)/u.test(w.tag)) continue;
    out.push(word);
  }
  return out;
}

function enKeywords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}'+#.-]+/u)
    .map((w) => w.replace(/^['.-]+|(?<!['.-])['.-]+$/gu, '').replace(/'s$/u, ''))
    .filter((w) => w.length > 1 && !EN_STOPWORDS.has(w) && !/^\d+$/u.test(w) && /\p{L}|\d-\d/u.test(w));
}

/**
 * Keywords of a text: content words, lowercase for Latin script, deduplicated, at most `limit`.
 * English keeps the order of appearance; Chinese lists Latin tokens ("payment-svc") first,
 * then the segmenter's content words.
 */
export function extractKeywords(text: string, lang: Lang, segmenter: Segmenter, limit = 16): string[] {
  const words =
    lang === 'zh'
      ? [...latinTokens(text).map((t) => t.toLowerCase()).filter((t) => !EN_STOPWORDS.has(t)), ...zhKeywords(text, segmenter)]
      : enKeywords(text);
  return [...new Set(words)].slice(0, limit);
}
