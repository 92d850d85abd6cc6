import { decide, DEFAULT_DECIDE_OPTIONS, type Decision, type Neighbour } from '../core/decisions/decide';
import { decisionFromProposal, labelNeighbours, needsJudgement, resolverPrompt, RESOLVER_SYSTEM_PROMPT, type LlmProposal } from '../core/decisions/llm-resolution';
import type { AppliedDecision } from '../core/dto';
import { normalizeFact } from '../core/extraction/offline-extractor';
import { contentTag, uuidFromKey } from '../adapters/ids';
import { tokenizeForIndex } from '../adapters/text/jieba';
import type { Memory, MemoryCandidate } from '../core/types';
import { eventStore } from '../adapters/postgres/event-repository';
import { graphStore } from '../adapters/postgres/graph-repository';
import { memoryStore, type NewMemory } from '../adapters/postgres/memory-repository';
import { inUserTransaction, type Queryable } from '../adapters/postgres/pool';
import type { ServiceDeps } from './deps';
import { importanceFor } from './importance';
import { restoreInTransaction } from './memory-lifecycle';
import { lifecycleStore } from '../adapters/postgres/lifecycle-repository';
import { restoreRefusal } from '../core/lifecycle/sweep';
import { defaultExpiry, type ExpiryOverrides } from '../core/lifecycle/decay';
import { syncVectors } from './vector-sync';

export interface AuditContext {
  workflowId?: string;
  runId?: string;
  conversationId?: string;
  actor: string;
}

const NEIGHBOURS = 8;

function jaccard(a: string[], b: string[]): number {
  const A = new Set(a);
  const B = new Set(b);
  if (A.size === 0 || B.size === 0) return 0;
  let inter = 0;
  for (const x of A) if (B.has(x)) inter++;
  return inter / (A.size + B.size - inter);
}

// Lives in ./importance so the lifecycle services can use it without importing the write path.
export { importanceFor };

function buildMemory(id: string, userId: string, c: MemoryCandidate, extra: { conversationId?: string; via: 'extraction' | 'api'; metadata?: Record<string, unknown>; ttlDays?: ExpiryOverrides }): NewMemory {
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
    tokens: tokenizeForIndex(`${c.text} ${c.keywords.join(' ')}`),
  };
}

async function gatherNeighbours(
  deps: ServiceDeps,
  client: Queryable,
  userId: string,
  candidate: MemoryCandidate,
  embedding: number[] | undefined,
): Promise<Neighbour[]> {
  const candTokens = tokenizeForIndex(candidate.text);
  const subjectTokens = candidate.subject ? tokenizeForIndex(candidate.subject) : [];
  // Chroma answers in parallel with PostgreSQL; the statements share one transaction's client,
  // which runs them one at a time anyway (and pg 9 will refuse overlapping ones).
  const vectorSearch = embedding ? deps.vectors.query({ userId, embedding, k: NEIGHBOURS }) : Promise.resolve([]);
  // Observed now so a Chroma failure during the SQL below is not an unhandled rejection; the
  // await further down still throws it.
  vectorSearch.catch(() => {});
  const lexicalHits = await memoryStore.bm25(client, userId, candTokens, NEIGHBOURS);
  const subjectHits = subjectTokens.length > 0 ? await memoryStore.bm25(client, userId, subjectTokens, NEIGHBOURS) : [];
  const sameFact = await memoryStore.findActiveByNormalized(client, userId, normalizeFact(candidate.text));
  const vectorHits = await vectorSearch;
  const sims = new Map(vectorHits.map((h) => [h.id, h.similarity]));
  const ids = [...new Set([...vectorHits.map((h) => h.id), ...lexicalHits.map((h) => h.id), ...subjectHits.map((h) => h.id), ...(sameFact ? [sameFact.id] : [])])];
  const active = await memoryStore.getActive(client, userId, ids);
  // An archived memory stating exactly this fact is a neighbour too: reinforcing it restores it.
  const archivedSame = sameFact ? undefined : await lifecycleStore.findArchivedByNormalized(client, userId, normalizeFact(candidate.text));
  const memories = archivedSame && restoreRefusal(archivedSame, candidate.saidAt) === null ? [...active, archivedSame] : active;
  const normalizedCandidate = normalizeFact(candidate.text);
  const normalizedSubject = candidate.subject ? normalizeFact(candidate.subject) : '';
  return memories.map((m) => {
    const mTokens = tokenizeForIndex(m.text);
    const normalized = normalizeFact(m.text);
    const subjectHit =
      normalizedSubject.length > 0 &&
      (normalized.includes(normalizedSubject) || (subjectTokens.length > 0 && subjectTokens.every((t) => mTokens.includes(t))));
    return {
      memory: m,
      vectorSimilarity: sims.get(m.id) ?? 0,
      lexicalOverlap: jaccard(candTokens, mTokens),
      sameNormalizedFact: normalized === normalizedCandidate,
      mentionsSubject: subjectHit,
    };
  });
}

/**
 * Decides what one candidate does to the user's memories and applies it, exactly once: under the
 * user's advisory lock (so concurrent extractions cannot race), keyed by `key` (so a retry or a
 * re-run returns the recorded decision instead of applying it again), with an audit event per
 * affected memory. Vectors follow through the outbox.
 */
export async function applyCandidate(
  deps: ServiceDeps,
  input: { userId: string; candidate: MemoryCandidate; key: string; audit: AuditContext; via?: 'extraction' | 'api'; metadata?: Record<string, unknown> },
): Promise<AppliedDecision> {
  const { userId, candidate, key, audit } = input;
  const [embedding] = candidate.confidence >= DEFAULT_DECIDE_OPTIONS.minConfidence ? await deps.embeddings.embedDocuments([candidate.text]) : [undefined];
  const base = { text: candidate.text, type: candidate.type, messageIds: candidate.messageIds };
  const judgement = await judgeOutsideLock(deps, userId, candidate, embedding, key);

  const applied = await inUserTransaction(deps.pool, userId, async (client) => {
    const previous = await eventStore.findByKey(client, userId, key);
    if (previous) {
      const after = (previous.after ?? {}) as Partial<AppliedDecision>;
      return { ...base, action: previous.action as AppliedDecision['action'], reason: previous.reason, memoryId: previous.memoryId ?? undefined, affectedIds: after.affectedIds ?? [], replayed: true };
    }
    const neighbours = await gatherNeighbours(deps, client, userId, candidate, embedding);
    const decision = resolve(candidate, neighbours, judgement, deps.config.extraction.dedupSimilarity);
    const at = candidate.saidAt;
    const eventBase = { userId, workflowId: audit.workflowId, runId: audit.runId, conversationId: audit.conversationId, messageIds: candidate.messageIds, actor: audit.actor };
    let result: AppliedDecision;

    switch (decision.action) {
      case 'ignore':
        result = { ...base, action: 'ignore', reason: decision.reason, affectedIds: [], replayed: false };
        break;
      case 'create': {
        const memory = buildMemory(uuidFromKey(`memory:${userId}:${key}`), userId, candidate, { conversationId: audit.conversationId, via: input.via ?? 'extraction', metadata: input.metadata, ttlDays: deps.config.lifecycle.ttlDays });
        await memoryStore.insert(client, memory);
        await graphStore.link(client, userId, memory.id, candidate.entities, candidate.relations);
        result = { ...base, action: 'create', reason: decision.reason, memoryId: memory.id, affectedIds: [], replayed: false };
        break;
      }
      case 'reinforce': {
        let before = await memoryStore.get(client, userId, decision.targetId);
        if (before?.status === 'archived') {
          // Restore on a strong explicit match: the user restated an archived fact word for word.
          await restoreInTransaction(client, before, { now: at, audit, reason: `restated by the user (${decision.reason}): restored from the archive`, messageIds: candidate.messageIds });
          before = await memoryStore.get(client, userId, decision.targetId);
        }
        const imp = importanceFor({ text: `${before!.text} ${candidate.text}`, frequencyCount: before!.frequencyCount + 1, lastAccessedAt: at, now: at, associatedTopics: before!.associatedTopics, prior: before!.importance });
        const after = await memoryStore.reinforce(client, userId, decision.targetId, { at, importance: imp.score, importanceLevel: imp.level, components: imp.components, recalled: false, emotionTags: candidate.emotionTags, messageIds: candidate.messageIds });
        await eventStore.insert(client, { ...eventBase, memoryId: decision.targetId, action: 'reinforce', reason: decision.reason, before: snapshot(before), after: snapshot(after) }, at);
        result = { ...base, action: 'reinforce', reason: decision.reason, memoryId: decision.targetId, affectedIds: [], replayed: false };
        break;
      }
      case 'update':
      case 'supersede': {
        // An in-place "update" is modelled as a supersede too, so the old wording stays auditable.
        const targets = decision.action === 'update' ? [decision.targetId] : decision.targetIds;
        const memory = buildMemory(uuidFromKey(`memory:${userId}:${key}`), userId, candidate, { conversationId: audit.conversationId, via: input.via ?? 'extraction', metadata: input.metadata, ttlDays: deps.config.lifecycle.ttlDays });
        memory.supersedes = targets[0] ?? null;
        if (decision.action === 'update') {
          const old = await memoryStore.get(client, userId, decision.targetId);
          memory.frequencyCount = (old?.frequencyCount ?? 0) + 1;
          // The count changed, so the score must follow; a more detailed restatement of the same
          // fact never matters less than what it replaces.
          const imp = importanceFor({ text: candidate.text, frequencyCount: memory.frequencyCount, lastAccessedAt: at, now: at, associatedTopics: candidate.entities.map((e) => e.kind), prior: Math.max(candidate.importance, old?.importance ?? 0) });
          Object.assign(memory, { importance: imp.score, importanceLevel: imp.level, importanceComponents: imp.components });
        }
        await memoryStore.insert(client, memory);
        await graphStore.link(client, userId, memory.id, candidate.entities, candidate.relations);
        for (const oldId of targets) {
          const before = await memoryStore.get(client, userId, oldId);
          const after = await memoryStore.setStatus(client, userId, oldId, 'superseded', at, { supersededBy: memory.id });
          await eventStore.insert(client, { ...eventBase, memoryId: oldId, action: 'superseded', reason: `${decision.reason}; replaced by ${memory.id}`, before: snapshot(before), after: snapshot(after) }, at);
        }
        result = { ...base, action: decision.action, reason: decision.reason, memoryId: memory.id, affectedIds: targets, replayed: false };
        break;
      }
      case 'forget': {
        for (const id of decision.targetIds) {
          const before = await memoryStore.get(client, userId, id);
          const after = await memoryStore.setStatus(client, userId, id, 'expired', at);
          await eventStore.insert(client, { ...eventBase, memoryId: id, action: 'expire', reason: decision.reason, before: snapshot(before), after: snapshot(after) }, at);
        }
        result = { ...base, action: 'forget', reason: decision.reason, affectedIds: decision.targetIds, replayed: false };
        break;
      }
    }
    // The decision itself, keyed: this row is what makes the whole step idempotent.
    await eventStore.insert(
      client,
      { ...eventBase, memoryId: result.memoryId ?? null, action: result.action, reason: result.reason, after: { affectedIds: result.affectedIds, candidate: { text: candidate.text, type: candidate.type, confidence: candidate.confidence } }, idempotencyKey: key },
      at,
    );
    return result;
  });

  if (!applied.replayed && (applied.memoryId || applied.affectedIds.length > 0)) {
    const ids = [...(applied.memoryId ? [applied.memoryId] : []), ...applied.affectedIds];
    await syncVectors(deps, { userId, memoryIds: ids, known: embedding && applied.memoryId ? { [applied.memoryId]: embedding } : {} });
  }
  return applied;
}

type Judgement = { judge: string; labelled: ReturnType<typeof labelNeighbours> } & ({ proposal: LlmProposal } | { unusable: string });

/**
 * Asks the LLM conflict resolver, when one is configured and the candidate has neighbours worth
 * weighing, before the user's lock is taken: a model call must not hold up the user's other
 * writes. The answer is checked against the neighbours again under the lock.
 */
async function judgeOutsideLock(deps: ServiceDeps, userId: string, candidate: MemoryCandidate, embedding: number[] | undefined, key: string): Promise<Judgement | undefined> {
  const judge = deps.conflictJudge;
  // A retried step whose decision is already recorded replays it: no need to pay for the model.
  if (!judge || (await eventStore.findByKey(deps.pool, userId, key))) return undefined;
  const neighbours = await gatherNeighbours(deps, deps.pool, userId, candidate, embedding);
  if (!needsJudgement(candidate, neighbours, DEFAULT_DECIDE_OPTIONS)) return undefined;
  const labelled = labelNeighbours(candidate, neighbours);
  const answer = await judge.propose({ system: RESOLVER_SYSTEM_PROMPT, prompt: resolverPrompt(candidate, labelled, contentTag) });
  return { judge: judge.name, labelled, ...answer };
}

/**
 * The decision: the model's, when it asked and its answer holds against the neighbours as they
 * are now; otherwise the rules', with the reason saying why the model's was not used.
 */
function resolve(candidate: MemoryCandidate, neighbours: Neighbour[], judgement: Judgement | undefined, dedupSimilarity: number): Decision {
  const rules = decide(candidate, neighbours, { ...DEFAULT_DECIDE_OPTIONS, dedupSimilarity });
  if (!judgement) return rules;
  if (!needsJudgement(candidate, neighbours, DEFAULT_DECIDE_OPTIONS)) return { ...rules, reason: `${rules.reason} (rules decided: the memories changed while ${judgement.judge} was deciding)` };
  if ('unusable' in judgement) return { ...rules, reason: `${rules.reason} (rules decided: ${judgement.judge} reply unusable: ${judgement.unusable})` };
  const outcome = decisionFromProposal(candidate, judgement.proposal, judgement.labelled, new Set(neighbours.map((n) => n.memory.id)), judgement.judge);
  if ('rejected' in outcome) return { ...rules, reason: `${rules.reason} (rules decided: ${judgement.judge} answer rejected: ${outcome.rejected})` };
  return outcome.decision;
}

function snapshot(m: Memory | undefined): Record<string, unknown> | undefined {
  if (!m) return undefined;
  return { text: m.text, type: m.type, status: m.status, scope: m.scope, importance: m.importance, frequencyCount: m.frequencyCount, supersededBy: m.supersededBy, updatedAt: m.updatedAt };
}
