/**
 * The extraction step of the ExtractMemories workflow: a page of a conversation's messages turned
 * into keyed memory candidates by the configured extractor.
 */
import { candidateToDTO, type CandidateDTO } from '../core/dto';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { normalizeFact } from '../core/extraction/offline-extractor';
import { shortHash } from '../shared/ids';
import type { ExtractionReport, StoredMessage } from '../core/ports/conversation';
import type { MemoryCandidate } from '../core/types';
import type { ServiceDeps } from '../shared/deps';
import { userTimeZone } from '../account/settings';
import { encodeKeyPart } from '../core/conversation/message-ids';

/**
 * Idempotency key of a candidate: the same messages saying the same thing give the same key.
 * Message ids are encoded, so ids holding `,` or `:` cannot make two candidates share a key.
 */
export function candidateKey(userId: string, conversationId: string, c: MemoryCandidate): string {
  return `extract:${userId}:${conversationId}:${c.messageIds.map(encodeKeyPart).join(',')}:${shortHash(`${c.type}|${c.intent}|${normalizeFact(c.text)}`)}`;
}

export interface ExtractedPage {
  /** Distinct by key: the same fact said twice in one page is decided once. */
  candidates: { candidate: CandidateDTO; key: string }[];
  /** The page's messages and the user's zone (reminder requests are read from them too). */
  messages: StoredMessage[];
  timeZone: string;
  messageCount: number;
  /** Where the next page starts; null after the last page. */
  nextSeq: number | null;
  report: ExtractionReport;
}

/**
 * Extracts the candidates of one page of a conversation (messages after `afterSeq`), with dates
 * resolved in the user's own zone ("明天", "next Friday"). A conversation without any message is
 * not_found.
 */
export async function extractCandidates(
  deps: Pick<ServiceDeps, 'conversations' | 'settings' | 'extractor'>,
  input: { userId: string; conversationId: string; afterSeq: number; limit: number; onProgress?: () => void },
): Promise<ExtractedPage> {
  const messages = await deps.conversations.page({ userId: input.userId, conversationId: input.conversationId, afterSeq: input.afterSeq, limit: input.limit });
  if (messages.length === 0 && input.afterSeq === 0) {
    throw new MemoryServiceError(ErrorCode.notFound, 'conversation has no messages', { conversationId: input.conversationId });
  }
  input.onProgress?.();
  const timeZone = await userTimeZone(deps, input.userId);
  const { candidates, report } = await deps.extractor.extract({ messages, timezone: timeZone });
  const seen = new Set<string>();
  const unique = candidates
    .map((c) => ({ candidate: candidateToDTO(c), key: candidateKey(input.userId, input.conversationId, c) }))
    .filter((c) => (seen.has(c.key) ? false : (seen.add(c.key), true)));
  return {
    candidates: unique,
    messages,
    timeZone,
    messageCount: messages.length,
    report,
    nextSeq: messages.length < input.limit ? null : messages[messages.length - 1]!.seq,
  };
}
