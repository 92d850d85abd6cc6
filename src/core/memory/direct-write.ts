/**
 * The provenance screen of extraction (src/core/extraction/provenance.ts), applied to a memory
 * written directly (POST …/memories, MCP memory_add). The written text is read as if the user had
 * said it in one message: what extraction would refuse in that message — text that is quoted,
 * pasted or forwarded ("the page says: …", "SYSTEM: …", a transcript, a mail), or a standing
 * instruction that no sentence of it gives to the assistant — a direct write refuses too, with the
 * screen's own reason. The screen's patterns are only called here, never copied.
 */
import type { RejectedCandidate } from '../ports/conversation';
import { ownWords } from '../text/quoted';
import type { Segmenter } from '../text/segmenter';
import type { ConversationMessage, MemoryCandidate, MemoryScope, MemoryType } from '../types';

/** The id of the one message a direct write is read as. */
const DIRECT_MESSAGE_ID = 'direct-write';

/** Why a direct write was refused: machine-readable `code`, and the screen's words. */
export interface DirectWriteRefusal {
  code: 'provenance_refused';
  reason: string;
}

/**
 * A memory attributed to something other than the user: a page, a site, a search or a tool
 * ("according to the web page…", "the tool result says…", "网页上说…"). In a conversation the user
 * may report what a page says; a memory written about the user must not be what a page says.
 */
const REPORTED_EN =
  /\baccording to\b|\b(?:web ?pages?|websites?|sites?|pages?|articles?|search results?|results?|tools?|tool (?:results?|outputs?)|outputs?|documents?|docs?|emails?)\s+(?:says?|said|states?|stated|shows?|showed|suggests?|suggested|recommends?|recommended|claims?|claimed|tells?|told|instructs?|instructed|asks?|asked|reads?|wants?)\b/iu;
const REPORTED_ZH = /(?:根据|据|按照)(?:网页|网站|页面|搜索结果|工具|文章|文档|邮件)|(?:网页|网站|页面|搜索结果|工具|文章|文档|邮件)(?:结果|输出|返回)?[上里中]?(?:说|写着|写道|显示|表示|提到|要求|建议)/u;

const squash = (text: string) => text.replace(/\s+/gu, ' ').trim();

/**
 * Extraction's provenance screen (the conversation's `screenCandidates`): which candidates the
 * messages they came from do not support, with the reason. The conversation owns it and sits above
 * memory, so the direct write takes it from its caller (ServiceDeps.provenanceScreen, wired in
 * src/runtime.ts) instead of importing it.
 */
export type ProvenanceScreen = (
  candidates: readonly MemoryCandidate[],
  messages: readonly ConversationMessage[],
  segmenter: Segmenter,
  timezone?: string,
) => { rejected: readonly Pick<RejectedCandidate, 'reason'>[] };

/** Null when the text passes the screen extraction applies, else the refusal. */
export function screenDirectWrite(
  input: { text: string; type: MemoryType; scope?: MemoryScope },
  screen: { provenanceScreen: ProvenanceScreen; segmenter: Segmenter },
  timezone = 'UTC',
): DirectWriteRefusal | null {
  // A memory is one statement: any quoted, pasted or forwarded material in it (which extraction
  // would leave out of the user's own words) is someone else's text, even when the rest would
  // carry enough words to pass the screen's support test.
  if (input.type !== 'assistant_contribution' && squash(ownWords(input.text)) !== squash(input.text)) {
    return { code: 'provenance_refused', reason: 'holds quoted, pasted, forwarded or transcript text, not a statement of the user' };
  }
  if (REPORTED_EN.test(input.text) || REPORTED_ZH.test(input.text)) {
    return { code: 'provenance_refused', reason: 'reports what a page, site, search, document or tool says, not what the user said' };
  }
  const at = new Date(0);
  const candidate: MemoryCandidate = {
    text: input.text,
    type: input.type,
    confidence: 1,
    importance: 0.5,
    keywords: [],
    entities: [],
    relations: [],
    scope: input.scope ?? 'global',
    emotionTags: [],
    messageIds: [DIRECT_MESSAGE_ID],
    // An assistant_contribution is the assistant's by definition; everything else is about the user.
    role: input.type === 'assistant_contribution' ? 'assistant' : 'user',
    saidAt: at,
    intent: 'assert',
  };
  const message = { id: DIRECT_MESSAGE_ID, role: candidate.role, content: input.text, at };
  const { rejected } = screen.provenanceScreen([candidate], [message], screen.segmenter, timezone);
  return rejected[0] ? { code: 'provenance_refused', reason: rejected[0].reason } : null;
}
