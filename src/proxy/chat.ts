/**
 * The pure half of the memory proxy: reading an OpenAI chat completions request, injecting recalled
 * memory at the two points of the read path (seed 004, §三), naming the turns it records, and
 * assembling the answer from a streamed response. No I/O here.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';

/** A chat message as OpenAI-compatible APIs take it; other fields travel untouched. */
export interface ChatMessage {
  role: string;
  content?: string | unknown[] | null;
  [key: string]: unknown;
}

type TextPart = { type: 'text'; text: string };
const isTextPart = (p: unknown): p is TextPart => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string';

/** The text of a message: its string content, or its text parts joined (images and audio are not text). */
export function messageText(message: ChatMessage | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.filter(isTextPart).map((p) => p.text).join('\n');
  return '';
}

/** Index of the last message from the user, or -1. */
export function lastUserIndex(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

/** The texts of the exchanges before the last user message, latest last, for recall's pronoun resolution. */
export function recentTexts(messages: readonly ChatMessage[], before: number, count = 4, maxChars = 8000): string[] {
  return messages
    .slice(0, Math.max(0, before))
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => messageText(m).slice(0, maxChars))
    .filter((t) => t.trim() !== '')
    .slice(-count);
}

const appendText = (content: ChatMessage['content'], text: string): ChatMessage['content'] =>
  Array.isArray(content) ? [...content, { type: 'text', text }] : content ? `${content}\n\n${text}` : text;

const prependText = (content: ChatMessage['content'], text: string): ChatMessage['content'] =>
  Array.isArray(content) ? [{ type: 'text', text }, ...content] : content ? `${text}\n\n${content}` : text;

/**
 * The request's messages with memory injected, without touching the caller's array:
 * - `system` (stable: standing instructions, persona) at the end of the system message — the
 *   first `system` or `developer` message, or a new system message in front when there is none —
 *   so providers keep caching the system prompt across turns;
 * - `userPrefix` (the memories for this message) before the text of the last user message, in its
 *   `<relevant-memories>` block that says it is reference, not instruction.
 */
export function injectMemory(messages: readonly ChatMessage[], context: { system: string; userPrefix: string }): ChatMessage[] {
  const out = messages.map((m) => ({ ...m }));
  const last = lastUserIndex(out);
  if (context.userPrefix && last >= 0) out[last] = { ...out[last]!, content: prependText(out[last]!.content, context.userPrefix) };
  if (context.system) {
    const s = out.findIndex((m) => m.role === 'system' || m.role === 'developer');
    if (s >= 0) out[s] = { ...out[s]!, content: appendText(out[s]!.content, context.system) };
    else out.unshift({ role: 'system', content: context.system });
  }
  return out;
}

/**
 * The conversation a request is recorded in: the caller's `X-Memory-Conversation`, or one per user
 * and day (`proxy-2026-03-02`, the day in the user's time zone), so a day of chatting through the
 * proxy is one conversation for extraction and search.
 */
export function proxyConversationId(header: string | undefined, now: Date, timeZone: string): string {
  if (header) return header;
  const day = DateTime.fromJSDate(now, { zone: timeZone });
  return `proxy-${(day.isValid ? day : DateTime.fromJSDate(now, { zone: 'UTC' })).toISODate()}`;
}

/**
 * Message ids of one turn, derived from the conversation and everything the caller sent up to and
 * including the user's message: a retried request records nothing twice, the same words later in
 * the chat are a new message, and the assistant's answer is one per user message (a retry's
 * different wording is a duplicate of the first answer, not a second one).
 */
export function turnIds(conversationId: string, messages: readonly ChatMessage[], userIndex: number): { user: string; assistant: string } {
  const hash = createHash('sha256').update(conversationId, 'utf8');
  for (const m of messages.slice(0, userIndex + 1)) hash.update(`\u0000${m.role}\u0000${messageText(m)}`, 'utf8');
  const h = hash.digest('base64url').replace(/[^A-Z0-9]/gi, '').slice(0, 32);
  return { user: `px${h}-u`, assistant: `px${h}-a` };
}

// eslint-disable-next-line no-control-regex -- stripping control characters is the point
const CONTROL = /[\u0000-\u0008\v\f\u000E-\u001F\u007F]/g;
const LONE_SURROGATE = /\p{Cs}/gu;

/** Text as the messages store takes it: no control characters or lone surrogates, at most `max` characters (then `truncated`). */
export function recordable(text: string, max: number): { content: string; truncated: boolean } | undefined {
  const clean = text.replace(CONTROL, ' ').replace(LONE_SURROGATE, '\uFFFD').trim();
  if (clean === '') return undefined;
  return clean.length > max ? { content: clean.slice(0, max), truncated: true } : { content: clean, truncated: false };
}

/** The assistant's text in a (non-streamed) chat completion: the first choice's message. */
export function completionText(body: unknown): string {
  const choice = (body as { choices?: { message?: ChatMessage }[] } | undefined)?.choices?.[0];
  return messageText(choice?.message);
}

/**
 * Reads a chat completions event stream as it passes through and assembles the first choice's
 * text. Lines may be split anywhere between chunks; anything that is not a `data:` line of JSON
 * (comments, keep-alives, `[DONE]`) is skipped.
 */
export class StreamedAnswer {
  private buffer = '';
  private parts: string[] = [];
  /** The upstream said `data: [DONE]`. */
  done = false;

  push(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      this.line(this.buffer.slice(0, nl).replace(/\r$/, ''));
      this.buffer = this.buffer.slice(nl + 1);
    }
  }

  /** Ends the stream: a last line without its newline still counts. */
  end(): void {
    if (this.buffer) this.line(this.buffer.replace(/\r$/, ''));
    this.buffer = '';
  }

  get text(): string {
    return this.parts.join('');
  }

  private line(line: string): void {
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    try {
      const event = JSON.parse(data) as { choices?: { index?: number; delta?: { content?: unknown } }[] };
      for (const c of event.choices ?? []) {
        if ((c.index ?? 0) === 0 && typeof c.delta?.content === 'string') this.parts.push(c.delta.content);
      }
    } catch {
      // Not JSON: an upstream's own extension of the stream; the caller gets it unchanged all the same.
      return;
    }
  }
}
