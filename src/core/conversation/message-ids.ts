/**
 * Message ids are the chat platform's own (Matrix `$abc:server.org`, `conv:42:msg:7`, ids with
 * `/` or `+`), so they are stored and returned exactly as given. Where one becomes part of a
 * composite key (an idempotency key, a workflow or activity summary), it is percent-encoded so that
 * no id can forge the key's separators. Ids made only of the characters allowed before (letters,
 * digits, `. _ @ -`) encode to themselves, so keys computed for them before stay the same.
 */
export const MAX_MESSAGE_ID_LENGTH = 256;

/** Characters a composite key may carry verbatim; everything else (including `%`) is escaped. */
const KEY_SAFE = /^[\w.@-]$/;

/** Injective and the identity on ids of letters, digits and `. _ @ -`. */
export function encodeKeyPart(id: string): string {
  let out = '';
  for (const ch of id) {
    if (KEY_SAFE.test(ch)) out += ch;
    else for (const byte of new TextEncoder().encode(ch)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// Control, format, surrogate, private-use and unassigned code points, and line/paragraph
// separators: nothing a person or platform prints, and what would split a log line.
const UNPRINTABLE = /[\p{C}\p{Zl}\p{Zp}]/u;

/** Why a message id is refused, or undefined when it is fine. */
export function messageIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'must not be empty';
  if (id.length > MAX_MESSAGE_ID_LENGTH) return `must be at most ${MAX_MESSAGE_ID_LENGTH} characters`;
  if (UNPRINTABLE.test(id)) return 'must be printable (no control, format or unassigned characters, no lone surrogates)';
  if (id.trim() !== id) return 'must not start or end with white space';
  return undefined;
}
