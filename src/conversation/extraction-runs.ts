/**
 * Incremental, idempotent extraction, so a retry or a re-run never pays for or decides a page twice: a run of ExtractMemories reads a
 * conversation's messages after its watermark, page by page. Each page's extractor output is kept
 * (leased while the model call runs) until the watermark passes the page, so a retried activity
 * never pays for the same page twice while the first attempt is alive, and a re-run over the same
 * messages decides the same candidates under the same keys.
 */
import { metrics } from '../observability/metrics';
import { candidateToDTO, type CandidateDTO } from '../core/dto';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { normalizeFact } from '../core/extraction/offline-extractor';
import { shortHash } from '../shared/ids';
import type { MemoryCandidate } from '../core/types';
import type { ServiceDeps } from '../shared/deps';
import type { ExtractionReport, PageKey, StaleConversation, StoredMessage } from '../core/ports/conversation';
import { userTimeZone } from '../account/settings';
import { scanPage, type MessageFailure, type PageScan } from '../shared/rule-work';
import type { ConversationReminderRequest } from '../core/proactive/conversation-reminders';
import { DEFAULT_DECIDE_OPTIONS } from '../core/decisions/decide';
import type { Embedder } from '../core/ports/memory';

/** A candidate and the key its decision is recorded under. */
export interface KeyedCandidate {
  candidate: CandidateDTO;
  key: string;
}

/**
 * Idempotency key of an extracted statement: who, which conversation, which messages (as a set),
 * which type, which subject, and its place among the output's statements with those same sources,
 * type and subject. No generated text: a model that words the same statement differently on a
 * second run (or a retry) still lands on the recorded decision instead of taking a new one.
 */
export function statementKey(userId: string, conversationId: string, c: Pick<MemoryCandidate, 'messageIds' | 'type' | 'subject'>, ordinal: number): string {
  const sources = [...new Set(c.messageIds)].sort().join(',');
  const subject = c.subject ? shortHash(normalizeFact(c.subject), 12) : '-';
  return `extract:${userId}:${conversationId}:${sources}:${c.type}:${subject}#${ordinal}`;
}

/**
 * Keys an extractor's output: a statement repeated word for word from the same messages is decided
 * once; the others are numbered in output order within their (sources, type, subject) group.
 */
export function keyCandidates(userId: string, conversationId: string, candidates: readonly MemoryCandidate[]): KeyedCandidate[] {
  const seen = new Set<string>();
  const ordinals = new Map<string, number>();
  const out: KeyedCandidate[] = [];
  for (const c of candidates) {
    const sources = [...new Set(c.messageIds)].sort().join(',');
    const same = `${sources}|${c.type}|${c.intent}|${normalizeFact(c.text)}`;
    if (seen.has(same)) continue;
    seen.add(same);
    const group = `${sources}|${c.type}|${c.subject ? normalizeFact(c.subject) : ''}`;
    const ordinal = ordinals.get(group) ?? 0;
    ordinals.set(group, ordinal + 1);
    out.push({ candidate: candidateToDTO(c), key: statementKey(userId, conversationId, c, ordinal) });
  }
  return out;
}

/** A message this page held out of extraction, and why (docs/write-path.md#quarantine). */
export interface QuarantineNote {
  messageId: string;
  reason: 'timeout' | 'error';
  detail: string;
  attempts: number;
}

export interface RunPage {
  candidates: KeyedCandidate[];
  /** The page's messages that were extracted (quarantined ones left out), and the user's zone. */
  messages: StoredMessage[];
  /** The reminder requests the rules found in those messages. */
  reminders: ConversationReminderRequest[];
  /** Messages quarantined by this page (or earlier), skipped by it. */
  quarantined: QuarantineNote[];
  timeZone: string;
  messageCount: number;
  /** The page covers messages with fromSeq < seq <= lastSeq (lastSeq null: no messages). */
  fromSeq: number;
  lastSeq: number | null;
  /** Where the next page starts; null after the last page. */
  nextSeq: number | null;
  /**
   * How far the watermark may move once this page's decisions are applied: its last message, or
   * for the last page the conversation's newest message (messages deleted by retention included).
   */
  coveredSeq: number;
  report?: ExtractionReport;
  /** The output came from an earlier attempt (or run) over the same page: no model was called. */
  reused: boolean;
}

export interface PageHooks {
  /** Identifies this activity attempt (workflow, run, activity id, attempt): who holds a page's lease. */
  attemptId: string;
  /** Called every `heartbeatMs` while the extractor runs or another attempt's call is awaited. */
  heartbeat(details: Record<string, unknown>): void;
  heartbeatMs?: number;
  /** Lease on a page while its model call runs, renewed with every heartbeat. */
  leaseMs?: number;
}

interface StoredOutput {
  candidates: KeyedCandidate[];
  report: ExtractionReport;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What one page of an extraction run reads: the run's watermarks, the messages, the user's settings, the extractor, the rule pool and the quarantine. */
export type ExtractionRunDeps = Pick<ServiceDeps, 'extractionRuns' | 'conversations' | 'settings' | 'extractor' | 'rules' | 'quarantine' | 'config'>;

/**
 * One page of a run: the messages after `afterSeq` (default: the conversation's watermark),
 * extracted once per page and extractor. A conversation without any message is not_found; one
 * with nothing after the watermark gives an empty last page.
 */
export async function extractRunPage(
  deps: ExtractionRunDeps,
  input: { userId: string; conversationId: string; afterSeq?: number; limit: number },
  hooks: PageHooks,
): Promise<RunPage> {
  const { userId, conversationId } = input;
  // Read before the messages: every message up to lastSeq is committed, so a short page below
  // covers the conversation up to it.
  const mark = await deps.extractionRuns.mark({ userId, conversationId });
  if (!mark || mark.lastSeq === 0) throw new MemoryServiceError(ErrorCode.notFound, 'conversation has no messages', { conversationId });
  const fromSeq = input.afterSeq ?? mark.extractedSeq;
  const messages = await deps.conversations.page({ userId, conversationId, afterSeq: fromSeq, limit: input.limit });
  const timeZone = await userTimeZone(deps, userId);
  const full = messages.length >= input.limit;
  const lastSeq = messages.at(-1)?.seq ?? null;
  const base = { timeZone, messageCount: messages.length, fromSeq, lastSeq, nextSeq: full ? lastSeq : null, coveredSeq: full ? lastSeq! : Math.max(fromSeq, lastSeq ?? 0, mark.lastSeq) };
  if (messages.length === 0) return { ...base, messages, reminders: [], quarantined: [], candidates: [], reused: false };

  // Quarantined messages are never read again; the others are scanned one by one off the event
  // loop, so a message that fails or overruns its time fails alone.
  const held = deps.quarantine ? await deps.quarantine.held({ userId, conversationId, fromSeq, toSeq: lastSeq! }) : new Set<number>();
  const open = messages.filter((m) => !held.has(m.seq));
  const quarantine = quarantineRecorder(deps, { userId, conversationId });
  hooks.heartbeat({ phase: 'scanning', messages: open.length });
  const beat = setInterval(() => hooks.heartbeat({ phase: 'scanning', messages: open.length }), hooks.heartbeatMs ?? 5000);
  let scan: PageScan;
  try {
    scan = await scanPage(deps.rules, open, timeZone, true, quarantine.record, open[0] === messages[0] ? await turnBefore(deps, { userId, conversationId }, fromSeq) : undefined);
  } finally {
    clearInterval(beat);
  }
  const quarantined = quarantine.finish();
  const survivors = open.filter((m) => scan.plans.has(m.id));
  const reminders = survivors.flatMap((m) => scan.plans.get(m.id)!.reminders);
  const page = { ...base, messages: survivors, reminders, quarantined };
  if (survivors.length === 0) return { ...page, candidates: [], reused: false };

  const key: PageKey = { userId, conversationId, fromSeq, toSeq: lastSeq!, variant: `${deps.extractor.name}|${timeZone}` };
  const { output, reused } = await extractOnce(deps, key, survivors, timeZone, scan, hooks);
  return { ...page, candidates: output.candidates, report: output.report, reused };
}

/**
 * The last message an earlier page or run covered (at or before `coveredSeq`), when it is the
 * assistant's and not quarantined: the question a short answer at the top of this page answers.
 */
async function turnBefore(deps: ExtractionRunDeps, conv: { userId: string; conversationId: string }, coveredSeq: number): Promise<StoredMessage | undefined> {
  if (coveredSeq < 1) return undefined;
  const previous = await deps.conversations.lastUpTo({ ...conv, seq: coveredSeq });
  if (previous?.role !== 'assistant') return undefined;
  const held = deps.quarantine ? await deps.quarantine.held({ ...conv, fromSeq: previous.seq - 1, toSeq: previous.seq }) : new Set<number>();
  return held.has(previous.seq) ? undefined : previous;
}

/** A message's rule work that failed again after an error: the activity retries the page. */
export class RuleWorkRetry extends Error {
  override readonly name = 'RuleWorkRetry';
}

/**
 * The quarantine policy (docs/write-path.md#quarantine): a message whose rules overran their time
 * is quarantined at once (pure work on the same text overruns again, and every retry costs a
 * thread its whole limit); one whose rules threw is quarantined after
 * EXTRACTION_QUARANTINE_AFTER_ERRORS failed attempts, the earlier ones failing the page so the
 * activity retries it (a thread that died for a reason of its own gets its second chance). Each
 * failure is recorded as it happens: an attempt that runs out of its own time keeps what it learnt.
 */
function quarantineRecorder(deps: Pick<ServiceDeps, 'quarantine' | 'config'>, conv: { userId: string; conversationId: string }) {
  const notes: QuarantineNote[] = [];
  let retry: string | undefined;
  return {
    async record(f: MessageFailure): Promise<void> {
      if (!deps.quarantine || f.seq === undefined) {
        retry ??= `rule work of message ${f.messageId} failed (${f.reason}): ${f.detail}`;
        return;
      }
      const quarantineAt = f.reason === 'timeout' ? 1 : deps.config.extraction.quarantineAfterErrors;
      const row = await deps.quarantine.recordFailure({ ...conv, messageId: f.messageId, seq: f.seq, reason: f.reason, detail: f.detail, quarantineAt });
      if (row.quarantinedAt) {
        notes.push({ messageId: f.messageId, reason: row.reason, detail: row.detail, attempts: row.attempts });
        console.warn(`message ${f.messageId} of conversation ${conv.conversationId} (user ${conv.userId}) quarantined after ${row.attempts} failed attempt(s): ${row.reason}: ${row.detail}`);
      } else retry ??= `rule work of message ${f.messageId} failed (${f.reason}, attempt ${row.attempts}): ${f.detail}`;
    },
    /** The messages quarantined by this scan; throws when one must be tried again first. */
    finish(): QuarantineNote[] {
      if (retry) throw new RuleWorkRetry(retry);
      return notes;
    },
  };
}

/** The page's stored output, or this attempt's extraction under a lease, or a live lease awaited. */
async function extractOnce(
  deps: Pick<ServiceDeps, 'extractionRuns' | 'extractor'>,
  key: PageKey,
  messages: StoredMessage[],
  timeZone: string,
  scan: PageScan,
  hooks: PageHooks,
): Promise<{ output: StoredOutput; reused: boolean }> {
  const heartbeatMs = hooks.heartbeatMs ?? 5000;
  const leaseMs = hooks.leaseMs ?? 30_000;
  const page = { fromSeq: key.fromSeq, toSeq: key.toSeq, messages: messages.length };
  for (;;) {
    const claim = await deps.extractionRuns.claimPage({ key, attemptId: hooks.attemptId, leaseMs });
    if (claim.state === 'done') return { output: claim.output as StoredOutput, reused: true };
    if (claim.state === 'busy') {
      // Another attempt (a retry's predecessor that is still alive) is paying for this page now.
      hooks.heartbeat({ phase: 'awaiting another attempt', ...page });
      await sleep(Math.max(100, Math.min(heartbeatMs, claim.leaseUntil.getTime() - Date.now() + 50)));
      continue;
    }
    hooks.heartbeat({ phase: 'extracting', ...page });
    const timer = setInterval(() => {
      hooks.heartbeat({ phase: 'extracting', ...page });
      deps.extractionRuns.renewLease({ key, attemptId: hooks.attemptId, leaseMs }).catch(() => {
        // A missed renewal only lets another attempt take over after the lease ends.
      });
    }, heartbeatMs);
    let extracted: StoredOutput;
    try {
      // The scan rides along: the offline rules reuse it instead of running a second time.
      const request = { messages, timezone: timeZone, scan };
      const { candidates, report } = await deps.extractor.extract(request);
      extracted = { candidates: keyCandidates(key.userId, key.conversationId, candidates), report };
    } catch (err) {
      await deps.extractionRuns.releaseLease({ key, attemptId: hooks.attemptId }).catch(() => {});
      throw err;
    } finally {
      clearInterval(timer);
    }
    // Stored even when this attempt has timed out meanwhile: its retry picks the answer up.
    const stored = (await deps.extractionRuns.savePage({ key, output: extracted })) as StoredOutput;
    return { output: stored, reused: false };
  }
}

/**
 * The embedder of one page's decisions: the texts the decisions will embed (a candidate below the
 * confidence floor embeds nothing) go out in one request up front, and each decision's own
 * request is then answered from it. Any other text passes through.
 */
export async function pageEmbedder(inner: Embedder, candidates: readonly Pick<MemoryCandidate, 'text' | 'confidence'>[]): Promise<Embedder> {
  const texts = [...new Set(candidates.filter((c) => c.confidence >= DEFAULT_DECIDE_OPTIONS.minConfidence).map((c) => c.text))];
  if (texts.length < 2) return inner;
  const vectors = await inner.embedDocuments({ texts });
  const known = new Map(texts.map((t, i) => [t, vectors[i]!]));
  return {
    embedQuery: (input) => inner.embedQuery(input),
    embedDocuments: (input) => (input.texts.every((t) => known.has(t)) ? Promise.resolve(input.texts.map((t) => known.get(t)!)) : inner.embedDocuments(input)),
  };
}

/**
 * The end of a run's pass: the watermark moves to what the pass covered, and the answer says
 * whether messages arrived after it meanwhile (the run then takes them too).
 */
export async function finishRunPass(deps: Pick<ServiceDeps, 'extractionRuns'>, input: { userId: string; conversationId: string; coveredSeq: number }): Promise<{ watermark: number; more: boolean }> {
  await deps.extractionRuns.advance({ userId: input.userId, conversationId: input.conversationId, seq: input.coveredSeq, ended: true });
  const mark = await deps.extractionRuns.mark(input);
  metrics.extractionRun('completed');
  return { watermark: mark?.extractedSeq ?? input.coveredSeq, more: mark ? mark.lastSeq > mark.extractedSeq : false };
}

/**
 * The end of an extraction run that read the whole conversation: the conversation is marked
 * ended, and runs started before watermarks end here too — what they read is done, so the
 * watermark moves to the newest message.
 */
export async function markConversationExtracted(deps: Pick<ServiceDeps, 'extractionRuns' | 'conversations'>, input: { userId: string; conversationId: string }): Promise<void> {
  await deps.conversations.markEnded(input);
  const mark = await deps.extractionRuns.mark(input);
  if (mark) await deps.extractionRuns.advance({ ...input, seq: mark.lastSeq });
  metrics.extractionRun('completed');
}

/**
 * Conversations of every user idle for `idleSeconds` with messages after their watermark, least
 * recently reconciled first; each is stamped so the next call moves on to others.
 */
export async function claimStaleConversations(deps: Pick<ServiceDeps, 'extractionRuns'>, input: { idleSeconds: number; limit: number }): Promise<StaleConversation[]> {
  return deps.extractionRuns.claimStale(input);
}
