/**
 * Cleans a raw incoming message into the user's intent before it is used as a recall query
 * (read-path §二 "sanitizeText"). Chat frontends and gateways wrap messages in sender tags,
 * timestamps, media placeholders, inline images and injected metadata — including our own
 * `<relevant-memories>` block when a client echoes the prompt back. Left in, they dominate
 * both the embedding and BM25 ("image", "2026", "user" match everything).
 */

/** Longest query kept, in code points: enough for intent, bounded for embedding cost. */
export const MAX_QUERY_CODE_POINTS = 2000;

/**
 * Most of a query the embedder is asked to read, in code points: about one 512-token window of
 * e5. The embedder reads a longer text window by window, one request at a time for every user, so
 * 2,000 CJK characters cost four windows (3 s on a loaded machine) and a user sending them in a
 * loop made every other user's vector search time out. Past this, the head and the tail are
 * kept: a long message states its subject first and asks its question last.
 */
export const MAX_EMBEDDED_QUERY_CODE_POINTS = 480;

/** `query` cut to what the embedder is asked to read ({@link MAX_EMBEDDED_QUERY_CODE_POINTS}). */
export function embeddableQuery(query: string): string {
  // Every query passes here: no code-point array for the usual short one.
  if (query.length <= MAX_EMBEDDED_QUERY_CODE_POINTS) return query;
  const points = Array.from(query);
  if (points.length <= MAX_EMBEDDED_QUERY_CODE_POINTS) return query;
  const half = MAX_EMBEDDED_QUERY_CODE_POINTS / 2;
  return `${points.slice(0, half).join('')}\n${points.slice(-half).join('')}`;
}

/**
 * Raw input beyond this many UTF-16 units is cut before the regexes run, to bound work on
 * pasted multi-megabyte blobs. Generous so the code-point cap above decides in practice.
 */
const MAX_RAW_UNITS = 100_000;

/** UTF-16 surrogates not part of a pair (a `u` regex matches a paired one as one code point). */
const LONE_SURROGATES = /\p{Cs}/gu;

/** Known injected blocks, removed with their content (unclosed ones up to the end). */
const INJECTED_BLOCK_TAGS = [
  'relevant-memories',
  'memories',
  'memory-context',
  'system-reminder',
  'context',
  'metadata',
  'conversation-metadata',
];

/** Keys that mark a fenced JSON block as gateway metadata rather than content to discuss. */
const METADATA_KEYS = /"(?:sender|sender_id|message_id|messageid|chat_id|channel|conversation_id|timestamp|from|metadata|reply_to)"\s*:/iu;

const MEDIA_WORDS =
  'image|images|photo|picture|video|audio|voice|file|attachment|sticker|gif|media|document|图片|照片|视频|语音|音频|文件|附件|表情|动画表情|表情包';

const RULES: readonly [RegExp, string][] = [
  // Data URIs and long base64 runs (inline images, files).
  // Continuation lines must be long so that ordinary words on the next line are not eaten.
  [/data:[\w.+/-]+(?:;[\w=.-]+)*;base64,[A-Z0-9+/=]*(?:\n[A-Z0-9+/=]{40,})*/giu, ' '],
  [/[A-Za-z0-9+/]{100,}={0,2}/gu, ' '],
  // Media placeholders: [image], [图片], [image: foo.png], [media attached: …]. A body holds no
  // opener, so an unclosed one is not re-read from every later opener (quadratic, issue #20).
  [new RegExp(`\\[(?:${MEDIA_WORDS})(?:\\s*[:：#][^[\\]\\n]*)?\\]`, 'giu'), ' '],
  [new RegExp(`【(?:${MEDIA_WORDS})(?:\\s*[:：#][^【】\\n]*)?】`, 'giu'), ' '],
  [/\[media attached[^[\]\n]*\]/giu, ' '],
  // Attachment-like tags: <attachment …/>, <image src=…>, <media:image>, and their closers.
  [/<\/?(?:attachment|image|img|media|file|audio|video)(?=[\s:/>])[^<>]*>/giu, ' '],
  // Chat mentions: <@123>, <@!123>, <@&123>, <#123>.
  [/<[@#][!&]?\d+>/gu, ' '],
  // Bracketed timestamps: [2026-01-01 10:00], [Mon 2026-01-01 10:00:00 GMT+8], [10:32].
  [/\[(?:[A-Za-z]{3},?\s+)?\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:\s*(?:Z|[A-Z]{2,5}(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2}))?\]/gu, ' '],
  [/\[\d{1,2}:\d{2}(?::\d{2})?\]/gu, ' '],
  // ISO date-times with a time part (machine timestamps), e.g. 2026-01-01T10:00:00Z.
  [/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/gu, ' '],
  // hh:mm:ss clock stamps; bare hh:mm is kept because users write "明天 10:00 提醒我".
  [/\b\d{1,2}:\d{2}:\d{2}\b/gu, ' '],
];

/** Sender tags at the start of a line: "[user]:", "User:", "[张三]:", "Assistant：". */
const LINE_SENDER =
  /^[ \t]*(?:\[[^\]\n\r]{1,40}\]|user|assistant|human|system|me|sender|from|用户|助手)[ \t]*[:：][ \t]*/gimu;

/**
 * Replaces each ``` fenced block for which `drop(language, body)` holds with a space. A scan with
 * indexOf, not /```(\w*)[^\n`]*\n?([\s\S]*?)```/g: that pattern retried its lazy body from every
 * unclosed fence and every word character of the info string (quadratic, issue #20).
 */
function replaceFences(text: string, drop: (language: string, body: string) => boolean): string {
  let out = '';
  let from = 0;
  for (let open = text.indexOf('```'); open >= 0; open = text.indexOf('```', from)) {
    // The info string holds no backtick, so the first ``` after the opening one closes the block.
    const close = text.indexOf('```', open + 3);
    if (close < 0) break;
    const info = text.slice(open + 3, close);
    const lineEnd = info.indexOf('\n');
    const header = lineEnd < 0 ? info : info.slice(0, lineEnd);
    const language = /^\w*/u.exec(header)?.[0] ?? '';
    const body = lineEnd < 0 ? '' : info.slice(lineEnd + 1);
    out += text.slice(from, open) + (drop(language, body) ? ' ' : text.slice(open, close + 3));
    from = close + 3;
  }
  return out + text.slice(from);
}

/**
 * Cuts each `<tag …>…</tag>` block, and an unclosed one up to the end, with one left-to-right
 * scan per tag. Not /<tag(?:\s[^>]*)?>[\s\S]*?<\/tag\s*>/g plus /<tag…>[\s\S]*$/: both retried
 * their body from every opening tag to the end of the text, quadratic on many unclosed openers
 * (issue #20). Attributes hold no `<`, so an attempt at one opener stops at the next.
 */
function cutBlocks(text: string, tag: string): string {
  const opener = new RegExp(`<${tag}(?:\\s[^<>]*)?>`, 'giu');
  const closer = new RegExp(`</${tag}\\s*>`, 'giu');
  let out = '';
  let from = 0;
  for (let open = opener.exec(text); open; open = opener.exec(text)) {
    closer.lastIndex = opener.lastIndex;
    const close = closer.exec(text);
    out += `${text.slice(from, open.index)} `;
    if (!close) return out;
    from = closer.lastIndex;
    opener.lastIndex = from;
  }
  return out + text.slice(from);
}

function removeInjectedBlocks(text: string): string {
  let out = text;
  for (const tag of INJECTED_BLOCK_TAGS) {
    out = cutBlocks(out, tag).replace(new RegExp(`</${tag}\\s*>`, 'giu'), ' ');
  }
  // Fenced metadata: ```metadata …``` always; ```json …``` only when it looks like gateway
  // metadata, so a user pasting JSON they want help with keeps it.
  out = replaceFences(out, (lang, body) => {
    const language = lang.toLowerCase();
    return language === 'metadata' || (language === 'json' && METADATA_KEYS.test(body));
  });
  // Gateway preambles that introduce such blocks, e.g. "Conversation info (untrusted metadata):".
  out = out.replace(/^[^\n\r]{0,60}\((?:untrusted )?metadata\)[:：]?[ \t]*$/gimu, ' ');
  return out;
}

/**
 * Returns the user's intent from a raw message: injected blocks, data URIs / base64, media
 * markers, mentions, sender tags and machine timestamps removed, whitespace collapsed, capped
 * at {@link MAX_QUERY_CODE_POINTS} code points (never splitting a surrogate pair).
 */
export function sanitizeQuery(raw: string): string {
  let text = raw.length > MAX_RAW_UNITS ? Array.from(raw.slice(0, MAX_RAW_UNITS + 1)).slice(0, -1).join('') : raw;
  // A lone surrogate cannot be encoded as UTF-8: the embeddings endpoint answered 500 to it, the
  // query was sent three times (retries) and recall lost its vector routes. Messages refuse them
  // (schemas.ts); a query is read, not stored, so it is mended instead.
  text = text.replace(LONE_SURROGATES, '\uFFFD');
  text = text.replace(/\r\n?/gu, '\n');
  text = removeInjectedBlocks(text);
  for (const [pattern, replacement] of RULES) text = text.replace(pattern, replacement);
  // Timestamps removed above may have preceded the sender tag; strip tags repeatedly
  // ("[user]: [Bob]: hi").
  let previous: string;
  do {
    previous = text;
    text = text.replace(LINE_SENDER, '');
  } while (text !== previous);
  text = text.replace(/\s+/gu, ' ').trim();
  const codePoints = Array.from(text);
  return codePoints.length > MAX_QUERY_CODE_POINTS ? codePoints.slice(0, MAX_QUERY_CODE_POINTS).join('').trimEnd() : text;
}
