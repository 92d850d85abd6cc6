import { ErrorCode, MemoryServiceError } from '../core/errors';
import { decide, DEFAULT_DECIDE_OPTIONS, type Decision, type Neighbour } from '../core/decisions/decide';
import { metrics } from '../observability/metrics';
import { decisionFromProposal, labelNeighbours, needsJudgement, resolverPrompt, RESOLVER_SYSTEM_PROMPT, type LlmProposal } from '../core/decisions/llm-resolution';
import type { AppliedDecision } from '../core/dto';
import { normalizeFact } from '../core/text/sentences';
import { tokenizeForIndex } from '../shared/segmentation';
import { contentTag, uuidFromKey } from '../shared/ids';
import { defaultExpiry, type ExpiryOverrides } from '../core/lifecycle/decay';
import { importanceFor } from '../core/lifecycle/memory-importance';
import type { MemoryEvent, NewMemory, StoredMemoryEvent } from '../core/ports/memory';
import type { MemoryTransaction } from '../core/ports/transaction';
import { directWriteConfidence, pendingOnWrite } from '../core/memory/via';
import type { Memory, MemoryCandidate, MemoryVia } from '../core/types';
import type { TypedStoreMemoryInput } from './memory-inference';
import type { ServiceDeps } from '../shared/deps';
import { restoreInTransaction } from './memory-lifecycle';
import { syncVectors } from './vector-sync';
import type { AuditContext } from './audit-context';
import { loadNeighbours } from './memory-neighbours';

export type { AuditContext };

/** What the write path needs: the memory ports, the vector index and embedder, the optional LLM judge. */
export type WriterDeps = Pick<ServiceDeps, 'memories' | 'memoryEvents' | 'unitOfWork' | 'vectors' | 'vectorOutbox' | 'embedder' | 'conflictJudge' | 'config'>;

/** One candidate to decide about, with where it came from. */
export interface CandidateInput {
  userId: string;
  candidate: MemoryCandidate;
  /** Idempotency key of the decision: a retry with the same key replays it. */
  key: string;
  audit: AuditContext;
  /** How the candidate arrived (default extraction): a direct write of an instruction is stored pending. */
  via?: MemoryVia;
  metadata?: Record<string, unknown>;
  /**
   * The request's fingerprint (a direct write with a client's request id): recorded with the
   * decision, and a replay under the same key with another fingerprint is refused.
   */
  requestFingerprint?: string;
  /** Runs in the decision's transaction, replayed or not (e.g. moving the extraction watermark). */
  afterDecision?: (tx: MemoryTransaction) => Promise<void>;
}

export { loadNeighbours, toNeighbours, type NeighbourSource } from './memory-neighbours';

function buildMemory(id: string, userId: string, c: MemoryCandidate, extra: { conversationId?: string; via: MemoryVia; metadata?: Record<string, unknown>; ttlDays?: ExpiryOverrides }): NewMemory {
  const topics = [...new Set([...c.entities.map((e) => e.name), ...c.keywords])].slice(0, 20);
  const imp = importanceFor({ text: c.text, frequencyCount: 1, lastAccessedAt: c.saidAt, now: c.saidAt, associatedTopics: c.entities.map((e) => e.kind), prior: c.importance });
  return {
    id,
    userId,
    text: c.text,
    normalizedText: normalizeFact(c.text),
    type: c.type,
    status: 'active',
    scope: c.scope,
    confidence: c.confidence,
    importance: imp.score,
    importanceLevel: imp.level,
    importanceComponents: imp.components,
    frequencyCount: 1,
    decayScore: 1,
    emotionTags: c.emotionTags,
    associatedTopics: topics,
    keywords: c.keywords,
    source: { conversationId: extra.conversationId, messageIds: c.messageIds, role: c.role, via: extra.via },
    metadata: { ...(extra.metadata ?? {}), entities: c.entities, relations: c.relations },
    createdAt: c.saidAt,
    updatedAt: c.saidAt,
    lastRecalledAt: null,
    lastAccessedAt: c.saidAt,
    // The extractor dates events and "最近…" states itself; anything else (API writes, an LLM
    // extractor) gets its type's lifetime from MEMORY_TTL_DAYS.
    expiresAt: c.expiresAt ?? defaultExpiry(c.type, c.saidAt, extra.ttlDays),
    supersedes: null,
    supersededBy: null,
    via: extra.via,
    pending: pendingOnWrite({ via: extra.via, type: c.type }),
    tokens: tokenizeForIndex(`${c.text} ${c.keywords.join(' ')}`),
  };
}

// ─── Stage 2: decide ───────────────────────────────────────────────────────────────────────────

type Judgement = { judge: string; labelled: ReturnType<typeof labelNeighbours> } & ({ proposal: LlmProposal } | { unusable: string });

/**
 * Asks the LLM conflict resolver, when one is configured and the candidate has neighbours worth
 * weighing, before the user's lock is taken: a model call must not hold up the user's other
 * writes. The answer is checked against the neighbours again under the lock.
 */
async function judgeOutsideLock(
  deps: Pick<WriterDeps, 'conflictJudge' | 'memoryEvents' | 'memories' | 'vectors'>,
  input: { userId: string; candidate: MemoryCandidate; embedding: number[] | undefined; key: string },
): Promise<Judgement | undefined> {
  const judge = deps.conflictJudge;
  // A retried step whose decision is already recorded replays it: no need to pay for the model.
  if (!judge || (await deps.memoryEvents.findByKey({ userId: input.userId, key: input.key }))) return undefined;
  const neighbours = await loadNeighbours(deps, input);
  if (!needsJudgement(input.candidate, neighbours, DEFAULT_DECIDE_OPTIONS)) return undefined;
  const labelled = labelNeighbours(input.candidate, neighbours);
  const answer = await judge.propose({ system: RESOLVER_SYSTEM_PROMPT, prompt: resolverPrompt(input.candidate, labelled, contentTag) });
  return { judge: judge.name, labelled, ...answer };
}

/**
 * The decision: the model's, when it asked and its answer holds against the neighbours as they
 * are now; otherwise the rules', with the reason saying why the model's was not used.
 */
export function resolve(candidate: MemoryCandidate, neighbours: Neighbour[], judgement: Judgement | undefined, dedupSimilarity: number): Decision {
  const rules = decide(candidate, neighbours, { ...DEFAULT_DECIDE_OPTIONS, dedupSimilarity });
  if (!judgement) return rules;
  if (!needsJudgement(candidate, neighbours, DEFAULT_DECIDE_OPTIONS)) return { ...rules, reason: `${rules.reason} (rules decided: the memories changed while ${judgement.judge} was deciding)` };
  if ('unusable' in judgement) return { ...rules, reason: `${rules.reason} (rules decided: ${judgement.judge} reply unusable: ${judgement.unusable})` };
  const outcome = decisionFromProposal(candidate, judgement.proposal, judgement.labelled, new Set(neighbours.map((n) => n.memory.id)), judgement.judge);
  if ('rejected' in outcome) return { ...rules, reason: `${rules.reason} (rules decided: ${judgement.judge} answer rejected: ${outcome.rejected})` };
  return outcome.decision;
}

/**
 * A pending write (a directly written instruction) replaces nothing: were it to supersede the
 * user's own instruction, an agent could retire what the user said before the user confirms
 * anything. It is created beside it instead.
 */
export function heldBack(decision: Decision, via: MemoryVia, candidate: MemoryCandidate): Decision {
  if (!pendingOnWrite({ via, type: candidate.type }) || (decision.action !== 'update' && decision.action !== 'supersede')) return decision;
  return { action: 'create', reason: `${decision.reason}; created beside it instead: an unconfirmed ${via} instruction replaces nothing` };
}

// ─── Stage 3: apply ────────────────────────────────────────────────────────────────────────────

/** Everything applying a decision needs besides the transaction. */
interface ApplyContext extends CandidateInput {
  /** Shared fields of the audit events of this decision. */
  eventBase: Omit<MemoryEvent, 'memoryId' | 'action' | 'reason'>;
  ttlDays?: ExpiryOverrides;
}

/** What applying changed: the memory created or reinforced, the memories moved out of active. */
type Applied = Pick<AppliedDecision, 'memoryId' | 'affectedIds'>;

type Tx = Pick<MemoryTransaction, 'memories' | 'events' | 'graph'>;

function newMemoryOf(ctx: ApplyContext): NewMemory {
  return buildMemory(uuidFromKey(`memory:${ctx.userId}:${ctx.key}`), ctx.userId, ctx.candidate, { conversationId: ctx.audit.conversationId, via: ctx.via ?? 'extraction', metadata: ctx.metadata, ttlDays: ctx.ttlDays });
}

/**
 * What a resolution leaves behind: the user's words with the problem they end, so the memory
 * still says what was fixed when the statement names nothing ("修好了（已解决：打印机老是卡纸）").
 */
async function resolutionMemoryOf(tx: Tx, ctx: ApplyContext, targets: readonly string[]): Promise<NewMemory> {
  const ended: string[] = [];
  for (const id of targets) {
    const old = await tx.memories.get({ userId: ctx.userId, id });
    if (old?.type === 'pain_point') ended.push(old.text);
  }
  if (ended.length === 0) return newMemoryOf(ctx);
  const zh = /\p{Script=Han}/u.test(ctx.candidate.text);
  const text = zh ? `${ctx.candidate.text}（已解决：${ended.join('；')}）` : `${ctx.candidate.text} (resolved: ${ended.join('; ')})`;
  return newMemoryOf({ ...ctx, candidate: { ...ctx.candidate, text } });
}

async function insertWithGraph(tx: Tx, ctx: ApplyContext, memory: NewMemory): Promise<void> {
  await tx.memories.insert(memory);
  await tx.graph.link({ userId: ctx.userId, memoryId: memory.id, entities: ctx.candidate.entities, relations: ctx.candidate.relations });
}

async function applyCreate(tx: Tx, ctx: ApplyContext): Promise<Applied> {
  const memory = newMemoryOf(ctx);
  await insertWithGraph(tx, ctx, memory);
  return { memoryId: memory.id, affectedIds: [] };
}

async function applyReinforce(tx: Tx, ctx: ApplyContext, decision: Extract<Decision, { action: 'reinforce' }>): Promise<Applied> {
  const { userId, candidate } = ctx;
  const at = candidate.saidAt;
  let before = await tx.memories.get({ userId, id: decision.targetId });
  if (before?.status === 'archived') {
    // Restore on a strong explicit match: the user restated an archived fact word for word.
    await restoreInTransaction(tx, before, { now: at, audit: ctx.audit, reason: `restated by the user (${decision.reason}): restored from the archive`, messageIds: candidate.messageIds });
    before = await tx.memories.get({ userId, id: decision.targetId });
  }
  const imp = importanceFor({ text: `${before!.text} ${candidate.text}`, frequencyCount: before!.frequencyCount + 1, lastAccessedAt: at, now: at, associatedTopics: before!.associatedTopics, prior: before!.importance });
  let after = await tx.memories.reinforce({ userId, id: decision.targetId, at, importance: imp.score, importanceLevel: imp.level, components: imp.components, recalled: false, emotionTags: candidate.emotionTags, messageIds: candidate.messageIds });
  await tx.events.append({ event: { ...ctx.eventBase, memoryId: decision.targetId, action: 'reinforce', reason: decision.reason, before: snapshot(before), after: snapshot(after) }, at });
  if (before!.pending && (ctx.via ?? 'extraction') === 'extraction') {
    // The user now said, in their own screened words, what an agent wrote: that is the confirmation.
    after = await tx.memories.confirm({ userId, id: decision.targetId, at });
    await tx.events.append({ event: { ...ctx.eventBase, memoryId: decision.targetId, action: 'confirm', reason: 'the user stated it in a conversation', before: snapshot(before), after: snapshot(after) }, at });
  }
  return { memoryId: decision.targetId, affectedIds: [] };
}

/** An in-place "update" is modelled as a supersede too, so the old wording stays auditable. */
async function applySupersede(tx: Tx, ctx: ApplyContext, decision: Extract<Decision, { action: 'update' | 'supersede' }>): Promise<Applied> {
  const { userId, candidate } = ctx;
  const at = candidate.saidAt;
  const targets = decision.action === 'update' ? [decision.targetId] : decision.targetIds;
  const memory = candidate.intent === 'resolve' ? await resolutionMemoryOf(tx, ctx, targets) : newMemoryOf(ctx);
  memory.supersedes = targets[0] ?? null;
  if (decision.action === 'update') {
    const old = await tx.memories.get({ userId, id: decision.targetId });
    memory.frequencyCount = (old?.frequencyCount ?? 0) + 1;
    // The count changed, so the score must follow; a more detailed restatement of the same
    // fact never matters less than what it replaces.
    const imp = importanceFor({ text: candidate.text, frequencyCount: memory.frequencyCount, lastAccessedAt: at, now: at, associatedTopics: candidate.entities.map((e) => e.kind), prior: Math.max(candidate.importance, old?.importance ?? 0) });
    Object.assign(memory, { importance: imp.score, importanceLevel: imp.level, importanceComponents: imp.components });
  }
  await insertWithGraph(tx, ctx, memory);
  for (const oldId of targets) {
    const before = await tx.memories.get({ userId, id: oldId });
    const after = await tx.memories.setStatus({ userId, id: oldId, status: 'superseded', at, supersededBy: memory.id });
    await tx.events.append({ event: { ...ctx.eventBase, memoryId: oldId, action: 'superseded', reason: `${decision.reason}; replaced by ${memory.id}`, before: snapshot(before), after: snapshot(after) }, at });
  }
  return { memoryId: memory.id, affectedIds: targets };
}

async function applyForget(tx: Tx, ctx: ApplyContext, decision: Extract<Decision, { action: 'forget' }>): Promise<Applied> {
  const at = ctx.candidate.saidAt;
  for (const id of decision.targetIds) {
    const before = await tx.memories.get({ userId: ctx.userId, id });
    const after = await tx.memories.setStatus({ userId: ctx.userId, id, status: 'expired', at });
    await tx.events.append({ event: { ...ctx.eventBase, memoryId: id, action: 'expire', reason: decision.reason, before: snapshot(before), after: snapshot(after) }, at });
  }
  return { affectedIds: decision.targetIds };
}

/** Carries the decision out: rows, postings, graph and outbox, with an audit event per affected memory. */
export async function applyDecision(tx: Tx, ctx: ApplyContext, decision: Decision): Promise<AppliedDecision> {
  const applied = await applyDecisionChanges(tx, ctx, decision);
  const { candidate } = ctx;
  return { text: candidate.text, type: candidate.type, messageIds: candidate.messageIds, action: decision.action, reason: decision.reason, ...applied, replayed: false };
}

function applyDecisionChanges(tx: Tx, ctx: ApplyContext, decision: Decision): Promise<Applied> {
  switch (decision.action) {
    case 'ignore':
      return Promise.resolve({ affectedIds: [] });
    case 'create':
      return applyCreate(tx, ctx);
    case 'reinforce':
      return applyReinforce(tx, ctx, decision);
    case 'update':
    case 'supersede':
      return applySupersede(tx, ctx, decision);
    case 'forget':
      return applyForget(tx, ctx, decision);
  }
}

// ─── Stage 4: audit ────────────────────────────────────────────────────────────────────────────

/** The decision itself, keyed: this row is what makes the whole step idempotent. */
export async function recordDecision(tx: Pick<MemoryTransaction, 'events'>, ctx: ApplyContext, result: AppliedDecision): Promise<void> {
  const { candidate } = ctx;
  await tx.events.append({
    event: {
      ...ctx.eventBase,
      memoryId: result.memoryId ?? null,
      action: result.action,
      reason: result.reason,
      after: {
        affectedIds: result.affectedIds,
        candidate: { text: candidate.text, type: candidate.type, confidence: candidate.confidence },
        ...(ctx.requestFingerprint ? { requestFingerprint: ctx.requestFingerprint } : {}),
      },
      idempotencyKey: ctx.key,
    },
    at: candidate.saidAt,
  });
}

/**
 * A key recorded by another request: a client that sent a request id again with another body made
 * a mistake, and replaying the first decision would tell it that its second body was stored.
 * Decisions recorded without a fingerprint (before requests carried one) replay unchecked.
 */
export function refuseOtherRequest(previous: StoredMemoryEvent, requestFingerprint: string | undefined): void {
  const recorded = (previous.after as { requestFingerprint?: unknown } | undefined)?.requestFingerprint;
  if (requestFingerprint === undefined || typeof recorded !== 'string' || recorded === requestFingerprint) return;
  throw new MemoryServiceError(ErrorCode.requestIdReused, 'the request id was used before for another body: the first request stands and nothing was written', {});
}

/** The decision recorded under the same key before, returned instead of applying it again. */
export function replayOf(previous: StoredMemoryEvent, candidate: MemoryCandidate): AppliedDecision {
  const after = (previous.after ?? {}) as Partial<AppliedDecision>;
  return {
    text: candidate.text,
    type: candidate.type,
    messageIds: candidate.messageIds,
    action: previous.action as AppliedDecision['action'],
    reason: previous.reason,
    memoryId: previous.memoryId ?? undefined,
    affectedIds: after.affectedIds ?? [],
    replayed: true,
  };
}

/**
 * The candidate a memory written directly (API, MCP) stands for: stated now, attributed to the user
 * (the screen in storeMemory held it to the user's kind of words), but what a writer claims rather
 * than what the user said, so never with full confidence.
 */
export function candidateOfStoreRequest(input: TypedStoreMemoryInput): MemoryCandidate {
  return {
    text: input.text,
    type: input.type,
    confidence: directWriteConfidence(input.confidence),
    importance: input.importance ?? 0.5,
    keywords: input.keywords ?? [],
    entities: [],
    relations: [],
    scope: input.scope ?? 'global',
    emotionTags: [],
    messageIds: [],
    role: 'user',
    saidAt: new Date(input.at),
    intent: 'assert',
    ...(input.expiresAt ? { expiresAt: new Date(input.expiresAt) } : {}),
  };
}

/** A memory written through the API (the StoreMemory workflow): decided like an extracted one, keyed by the request id. */
export function applyStoreRequest(deps: WriterDeps, input: { store: TypedStoreMemoryInput; audit: AuditContext }): Promise<AppliedDecision> {
  const { store, audit } = input;
  return applyCandidate(deps, {
    userId: store.userId,
    candidate: candidateOfStoreRequest(store),
    key: `api:${store.requestId}`,
    audit,
    via: store.via ?? 'api',
    metadata: store.metadata,
    requestFingerprint: store.requestFingerprint,
  });
}

// ─── The write path ────────────────────────────────────────────────────────────────────────────

/**
 * Decides what one candidate does to the user's memories and applies it, exactly once: under the
 * user's advisory lock (so concurrent extractions cannot race), keyed by `key` (so a retry or a
 * re-run returns the recorded decision instead of applying it again), with an audit event per
 * affected memory. Vectors follow through the outbox.
 */
export async function applyCandidate(deps: WriterDeps, input: CandidateInput): Promise<AppliedDecision> {
  const { userId, candidate, key, audit } = input;
  const [embedding] = candidate.confidence >= DEFAULT_DECIDE_OPTIONS.minConfidence ? await deps.embedder.embedDocuments({ texts: [candidate.text] }) : [undefined];
  const judgement = await judgeOutsideLock(deps, { userId, candidate, embedding, key });
  const ctx: ApplyContext = {
    ...input,
    eventBase: { userId, workflowId: audit.workflowId, runId: audit.runId, conversationId: audit.conversationId, messageIds: candidate.messageIds, actor: audit.actor, via: input.via ?? 'extraction' },
    ttlDays: deps.config.lifecycle.ttlDays,
  };

  const applied = await deps.unitOfWork.forUser({
    userId,
    work: async (tx) => {
      const previous = await tx.events.findByKey({ userId, key });
      if (previous) {
        refuseOtherRequest(previous, input.requestFingerprint);
        await input.afterDecision?.(tx);
        return replayOf(previous, candidate);
      }
      const neighbours = await loadNeighbours({ memories: tx.memories, vectors: deps.vectors }, { userId, candidate, embedding });
      const decision = heldBack(resolve(candidate, neighbours, judgement, deps.config.extraction.dedupSimilarity), input.via ?? 'extraction', candidate);
      const result = await applyDecision(tx, ctx, decision);
      await recordDecision(tx, ctx, result);
      await input.afterDecision?.(tx);
      return result;
    },
  });

  if (!applied.replayed) metrics.decision(applied.action);
  // A resolution's memory carries the problem's words too, so its vector is not the statement's.
  // A replayed decision syncs too: the attempt that applied it may have died before its vectors
  // were written (only entries still in the outbox are sent, so this costs nothing otherwise).
  if (applied.memoryId || applied.affectedIds.length > 0) {
    const ids = [...(applied.memoryId ? [applied.memoryId] : []), ...applied.affectedIds];
    await syncVectors(deps, { userId, memoryIds: ids, known: !applied.replayed && embedding && applied.memoryId && candidate.intent !== 'resolve' ? { [applied.memoryId]: embedding } : {} });
  }
  return applied;
}

function snapshot(m: Memory | undefined): Record<string, unknown> | undefined {
  if (!m) return undefined;
  return { text: m.text, type: m.type, status: m.status, scope: m.scope, importance: m.importance, frequencyCount: m.frequencyCount, supersededBy: m.supersededBy, updatedAt: m.updatedAt, via: m.via, pending: m.pending };
}
