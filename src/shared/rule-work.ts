/**
 * The CPU-heavy, pure rule work of extraction, and the word segmentation of appended messages for
 * conversation search, as tasks that can run on a worker thread
 * (src/adapters/extraction/rule-pool.ts) or, without a pool, on the caller's thread (unit tests,
 * scripts). The rules are regular expressions and word segmentation over user text: one hostile
 * message can cost minutes, and the largest message batch seconds of segmentation, so the
 * services never run them on the event loop that serves other users.
 *
 * Shared plumbing, not an adapter: conversation and proactive both scan pages with it, and the
 * only outside piece is the process's segmenter (segmentation.ts). The thread pool is the adapter,
 * wired in src/runtime.ts. Not in src/core either: a task's plan names the extraction and the
 * proactive domains at once, which neither a kernel port nor one domain may import.
 */
import { dedupeCandidates, planOfflineMessage } from '../core/extraction/offline-extractor';
import type { NetStatement } from '../core/extraction/net-statements';
import { screenCandidates } from '../core/extraction/provenance';
import { detectReminderRequests, type ConversationReminderRequest } from '../core/proactive/conversation-reminders';
import type { RejectedCandidate } from '../core/extraction/provenance';
import type { ConversationMessage, MemoryCandidate } from '../core/types';
import type { MessagePostings } from '../core/ports/conversation';
import { termFrequencies } from '../core/text/tokenize';
import { segmenter, tokenizeForIndex } from './segmentation';

/** One message's rule work: its window (the message and the neighbours an assistant turn needs). */
export interface MessageTask {
  kind: 'message';
  messages: ConversationMessage[];
  index: number;
  timezone: string;
  withStatements: boolean;
}

/** What the rules found in one message: candidates, statements for the recall net, reminder requests. */
export interface MessagePlan {
  candidates: MemoryCandidate[];
  statements: NetStatement[];
  reminders: ConversationReminderRequest[];
}

/** The provenance screen of a page's candidates against its (quarantine-free) messages. */
export interface ScreenTask {
  kind: 'screen';
  candidates: MemoryCandidate[];
  messages: ConversationMessage[];
  timezone: string;
}

export interface ScreenResult {
  accepted: MemoryCandidate[];
  rejected: RejectedCandidate[];
}

/** The conversation-search postings of some messages' texts, one per text in their order. */
export interface IndexTask {
  kind: 'index';
  texts: string[];
}

export type RuleTask = MessageTask | ScreenTask | IndexTask;

/**
 * At most this many distinct terms of one message are indexed. Chat messages have far fewer (a
 * 300-word answer has about 150 distinct terms once stopwords are dropped); a message of random
 * words or numbers at MAX_MESSAGE_CHARS has over a thousand, and a batch of them wrote hundreds of
 * thousands of postings and document frequencies in one statement, past its timeout. With the
 * bound a batch writes at most this many postings per message, whatever its text.
 */
export const MESSAGE_INDEX_MAX_TERMS = 128;

/**
 * The postings of one message: its terms with their tf, the {@link MESSAGE_INDEX_MAX_TERMS} most
 * frequent when it has more (ties by first occurrence), so what a message repeats stays findable.
 * A message within the bound is indexed whole; one past it is indexed as the document its kept
 * terms make (its length is theirs), so every BM25 statistic stays the same definition.
 */
export function messageIndexTerms(tokens: readonly string[]): [string, number][] {
  const all = [...termFrequencies(tokens)];
  if (all.length <= MESSAGE_INDEX_MAX_TERMS) return all;
  // Array.prototype.sort is stable: equal tf keeps the order of first occurrence.
  return all.sort((a, b) => b[1] - a[1]).slice(0, MESSAGE_INDEX_MAX_TERMS);
}

function messagePostings(text: string): MessagePostings {
  const terms = messageIndexTerms(tokenizeForIndex(text));
  // The message's length as the messages.doc_length trigger counts it: the sum of its postings' tf.
  let docLength = 0;
  for (const [, tf] of terms) docLength += tf;
  return { terms: terms.map(([term]) => term), tfs: terms.map(([, tf]) => tf), docLength };
}

export function runRuleTask(task: MessageTask): MessagePlan;
export function runRuleTask(task: ScreenTask): ScreenResult;
export function runRuleTask(task: IndexTask): MessagePostings[];
export function runRuleTask(task: RuleTask): MessagePlan | ScreenResult | MessagePostings[];
export function runRuleTask(task: RuleTask): MessagePlan | ScreenResult | MessagePostings[] {
  if (task.kind === 'screen') return screenCandidates(task.candidates, task.messages, segmenter, task.timezone);
  if (task.kind === 'index') return task.texts.map(messagePostings);
  const message = task.messages[task.index];
  if (!message) return { candidates: [], statements: [], reminders: [] };
  const plan = planOfflineMessage(task.messages, task.index, { timezone: task.timezone, segmenter: segmenter }, task.withStatements);
  return { ...plan, reminders: message.role === 'user' ? detectReminderRequests([message], task.timezone) : [] };
}

/** Why a rule task failed: it ran out of its time, or the rules (or the segmenter) threw. */
export class RuleWorkError extends Error {
  constructor(
    readonly reason: 'timeout' | 'error',
    message: string,
  ) {
    super(message);
    this.name = 'RuleWorkError';
  }
}

/** Runs rule tasks somewhere: a worker pool with a time limit per task, or inline. */
export interface RuleWork {
  /** One message's rule work; rejects with {@link RuleWorkError} when it times out or throws. */
  planMessage(task: Omit<MessageTask, 'kind'>): Promise<MessagePlan>;
  /** The provenance screen of a page; rejects with {@link RuleWorkError} too. */
  screen(task: Omit<ScreenTask, 'kind'>): Promise<ScreenResult>;
  /**
   * The conversation-search postings of a batch's texts, in their order, segmented before the
   * batch is stored; rejects with {@link RuleWorkError} too (a batch that runs out of time is
   * refused, not stored unindexed).
   */
  indexPostings(task: Omit<IndexTask, 'kind'>): Promise<MessagePostings[]>;
  close(): Promise<void>;
}

/**
 * The rule work on the caller's own thread, without a time limit: for unit tests and scripts,
 * where the thread serves nobody else. Every process that serves users gets the pool from the
 * runtime (src/runtime.ts).
 */
export const inlineRuleWork: RuleWork = {
  async planMessage(task) {
    try {
      return runRuleTask({ kind: 'message', ...task });
    } catch (err) {
      throw new RuleWorkError('error', err instanceof Error ? err.message : String(err));
    }
  },
  async screen(task) {
    return runRuleTask({ kind: 'screen', ...task });
  },
  async indexPostings(task) {
    return runRuleTask({ kind: 'index', ...task });
  },
  async close() {},
};

/** One message of a page whose rule work failed. */
export interface MessageFailure {
  messageId: string;
  seq?: number;
  reason: 'timeout' | 'error';
  detail: string;
}

/** A page's rule work, message by message: what each message gave, and which messages failed. */
export interface PageScan {
  plans: Map<string, MessagePlan>;
  failures: MessageFailure[];
}

/**
 * Runs the rules over each message of a page on its own, so one message that times out or throws
 * fails alone and the rest of its conversation is still extracted. User messages go first: an
 * assistant turn is then read with the user messages that survived as its neighbours, so a failed
 * message is never read again as another message's context.
 */
export async function scanPage(
  rules: RuleWork,
  messages: readonly (ConversationMessage & { seq?: number })[],
  timezone: string,
  withStatements: boolean,
  /** Told of each failure as it happens, so it is recorded even if the caller's time runs out. */
  onFailure?: (failure: MessageFailure) => Promise<void>,
  /**
   * The message just before the page (the end of an earlier page or run): read only as the turn
   * before the page's first message, never planned itself, so an answer at the top of a page still
   * sees the question it answers.
   */
  previous?: ConversationMessage,
): Promise<PageScan> {
  const plans = new Map<string, MessagePlan>();
  const failures: MessageFailure[] = [];
  const run = async (window: ConversationMessage[], index: number, m: ConversationMessage & { seq?: number }) => {
    try {
      plans.set(m.id, await rules.planMessage({ messages: window, index, timezone, withStatements }));
    } catch (err) {
      const reason = err instanceof RuleWorkError ? err.reason : 'error';
      const failure: MessageFailure = { messageId: m.id, ...(m.seq === undefined ? {} : { seq: m.seq }), reason, detail: err instanceof Error ? err.message : String(err) };
      failures.push(failure);
      await onFailure?.(failure);
    }
  };
  // A user turn is read with the assistant turn right before it: a short answer ("Cello.") takes
  // its predicate from the question (src/core/extraction/answers.ts).
  const turnBefore = (i: number) => (i === 0 ? previous : messages[i - 1]);
  await Promise.all(
    messages.map((m, i) => {
      if (m.role !== 'user') return undefined;
      const before = turnBefore(i);
      return before?.role === 'assistant' ? run([before, m], 1, m) : run([m], 0, m);
    }),
  );
  const failed = new Set(failures.map((f) => f.messageId));
  const survivors = messages.filter((m) => !failed.has(m.id));
  await Promise.all(
    survivors.map((m, i) => {
      if (m.role === 'user') return undefined;
      // The same neighbours planOfflineExtraction reads: the user turn before, and the one right after.
      const before = survivors.slice(0, i).findLast((p) => p.role === 'user');
      const after = survivors[i + 1]?.role === 'user' ? survivors[i + 1] : undefined;
      const window = [...(before ? [before] : []), m, ...(after ? [after] : [])];
      return run(window, before ? 1 : 0, m);
    }),
  );
  return { plans, failures };
}

/** The rules' candidates of the scanned messages, in message order, merged as one page's. */
export function pageCandidates(scan: PageScan, messages: readonly ConversationMessage[]): { candidates: MemoryCandidate[]; statements: NetStatement[] } {
  const candidates: MemoryCandidate[] = [];
  const statements: NetStatement[] = [];
  for (const m of messages) {
    const plan = scan.plans.get(m.id);
    if (!plan) continue;
    candidates.push(...plan.candidates);
    statements.push(...plan.statements);
  }
  return { candidates: dedupeCandidates(candidates), statements };
}
