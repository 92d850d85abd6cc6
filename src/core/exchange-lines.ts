/**
 * The shape of a stored conversation line and how lines pair into exchanges (a user line and the
 * assistant line that answered it). Shared by the conversation's exchange index, recall's exchange
 * search, episodes and the ports, so it is kernel: pure, no capability's domain.
 */
import type { MessageRole } from './types';
import { cutCodePoints } from './text/code-points';

/** A stored message as the exchange builder needs it. */
export interface StoredLine {
  conversationId: string;
  messageId: string;
  seq: number;
  role: MessageRole;
  content: string;
  at: Date;
}

/** A (conversation, message) reference. */
export interface MessageRef {
  conversationId: string;
  messageId: string;
}

/** A message found by a search, with how well it matched. */
export interface MessageHit extends MessageRef {
  score: number;
  /** Distinct query terms the message contains. */
  matched: string[];
}

/** A stored line and whether it must stay out of what is shown. */
export type ShownLine = StoredLine & { hidden: boolean };

/** One user line and the assistant line that answered it (either may be missing). */
export interface ExchangeCandidate {
  /** Stable identity of the pair, so the same exchange found by several routes is one. */
  key: string;
  conversationId: string;
  user?: StoredLine;
  assistant?: StoredLine;
  /** When the exchange happened: the user line's time, else the assistant's. */
  date: Date;
  messageIds: string[];
}

/** Key of a message inside a user's data (message ids are unique per conversation only). */
export function messageKey(conversationId: string, messageId: string): string {
  return `${conversationId}\u0000${messageId}`;
}

/**
 * The exchange around `anchor`: a user line pairs with the assistant line right after it, an
 * assistant line with the user line right before it. Lines of the same role never pair.
 */
export function pairExchange(anchor: StoredLine, previous?: StoredLine, next?: StoredLine): ExchangeCandidate {
  const same = (x?: StoredLine): x is StoredLine => x !== undefined && x.conversationId === anchor.conversationId;
  const user = anchor.role === 'user' ? anchor : same(previous) && previous.role === 'user' ? previous : undefined;
  const assistant = anchor.role === 'assistant' ? anchor : same(next) && next.role === 'assistant' ? next : undefined;
  const lines = [user, assistant].filter((x): x is StoredLine => x !== undefined);
  return {
    key: lines.map((l) => messageKey(l.conversationId, l.messageId)).join('\u0001'),
    conversationId: anchor.conversationId,
    ...(user ? { user } : {}),
    ...(assistant ? { assistant } : {}),
    date: (user ?? anchor).at,
    messageIds: lines.map((l) => l.messageId),
  };
}

/** Longest line embedded (code points); e5 reads 512 tokens, the rest is noise. */
export const MAX_EXCHANGE_TEXT_CODE_POINTS = 1500;

/** One line to embed, and the text its vector is made of. */
export interface IndexableLine {
  line: StoredLine;
  text: string;
}

/**
 * What the exchange indexer embeds: each line on its own, so a vector hit names the line that
 * matched (search pairs it with its partner, as it pairs a keyword hit). A pair's vector blurred
 * an answer into its partner's words and could not tell which half matched. Empty lines are left
 * out and long ones cut.
 */
export function indexableLines(lines: readonly StoredLine[]): IndexableLine[] {
  return lines.flatMap((line) => {
    const text = cutCodePoints(line.content.trim(), MAX_EXCHANGE_TEXT_CODE_POINTS);
    return text === '' ? [] : [{ line, text }];
  });
}

/** One exchange to embed: the lines it pairs, in order, and the text its vector is made of. */
export interface IndexableExchange {
  conversationId: string;
  /** The exchange's first message, which anchors it (its vector id derives from it). */
  anchor: StoredLine;
  lines: StoredLine[];
  text: string;
}

/**
 * Pairs consecutive lines (seq order, one conversation) into exchanges the way
 * {@link pairExchange} pairs a search hit: a user line with the assistant line right after it;
 * any other line stands alone. Empty lines are left out.
 */
export function pairLines(lines: readonly StoredLine[]): IndexableExchange[] {
  const out: IndexableExchange[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i]!;
    const next = lines[i + 1];
    const pair = first.role === 'user' && next?.role === 'assistant' ? [first, next] : [first];
    if (pair.length === 2) i++;
    const text = cutCodePoints(pair.map((l) => l.content.trim()).filter((t) => t !== '').join('\n'), MAX_EXCHANGE_TEXT_CODE_POINTS);
    if (text !== '') out.push({ conversationId: first.conversationId, anchor: first, lines: pair, text });
  }
  return out;
}
