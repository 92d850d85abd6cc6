import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { MemoryReader } from '../core/ports/memory';
import { screenDirectWrite, type ProvenanceScreen } from '../core/memory/direct-write';
import type { Memory } from '../core/types';
import { segmenter as jiebaSegmenter } from '../shared/segmentation';
import { MemoryWorkflows, type StoreMemoryInput, type StoreMemoryWorkflow } from './contract';
import type { AppConfig } from '../config';
import type { SubjectKeys } from '../security/subject';
import { waitForResult, withTemporalDeadline } from '../shared/workflow-wait';
import { workflowCallError } from '../shared/workflow-failures';
import { userSearchAttributes } from '../../workflows/shared/search-attributes';

export interface StoreMemoryDeps {
  memories: MemoryReader;
  temporal: Client;
  taskQueue: string;
  subjects: SubjectKeys;
  /** Extraction's provenance screen, which the direct write runs (ServiceDeps.provenanceScreen). */
  provenanceScreen: ProvenanceScreen;
  /** WORKFLOW_WAIT_TIMEOUT_MS and TEMPORAL_CALL_TIMEOUT_MS (docs/reliability.md). */
  config: { reliability: Pick<AppConfig['reliability'], 'workflowWaitMs' | 'temporalCallMs'> };
}

/**
 * What a caller asks to store: the workflow's input without the user (taken from the request) and
 * with the time and the request id optional. `requestId` makes retries idempotent: one workflow
 * (and one decision) per request id.
 */
export type StoreMemoryRequest = Omit<StoreMemoryInput, 'userId' | 'requestId' | 'at' | 'via'> & { at?: string; requestId?: string };

/** The stored memory, or (`pending`) the workflow that is still storing it after WORKFLOW_WAIT_TIMEOUT_MS. */
export type StoreMemoryResult = { pending?: false; memory: Memory; decision: { action: string; reason: string }; workflowId: string } | { pending: true; workflowId: string };

/**
 * Stores one memory through the StoreMemory workflow (decision, PostgreSQL row, Chroma vector) and
 * returns the memory the decision landed on — POST …/memories and the MCP tool `memory_add`. A
 * workflow slower than WORKFLOW_WAIT_TIMEOUT_MS goes on and the answer is `pending` with its id
 * (the same requestId joins the same workflow).
 */
export async function storeMemory(deps: StoreMemoryDeps, userKey: string, body: StoreMemoryRequest, via: NonNullable<StoreMemoryInput['via']> = 'api'): Promise<StoreMemoryResult> {
  // Extraction's provenance screen, before anything is durable: what it would refuse in the user's
  // message, a direct write refuses, whole, with the screen's reason (nothing half-written).
  // Without a type, screened as the plain fact it is until the worker's extractor infers more (and screens again).
  const refusal = screenDirectWrite({ text: body.text, type: body.type ?? 'fact', scope: body.scope }, { provenanceScreen: deps.provenanceScreen, segmenter: jiebaSegmenter });
  if (refusal) throw new MemoryServiceError(ErrorCode.provenanceRefused, `refused by the provenance screen extraction applies: ${refusal.reason}`, { reason: refusal.reason, via });
  const requestId = body.requestId ?? randomUUID();
  const workflowId = `store:${userKey}:${deps.subjects.ref(userKey, 'request', requestId)}`;
  let decision;
  try {
    const handle = await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () =>
      deps.temporal.workflow.start<StoreMemoryWorkflow>(MemoryWorkflows.store, {
        taskQueue: deps.taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ userId: userKey, requestId, text: body.text, type: body.type, scope: body.scope, confidence: body.confidence, importance: body.importance, keywords: body.keywords, metadata: body.metadata, expiresAt: body.expiresAt, at: body.at ?? new Date().toISOString(), via }],
        typedSearchAttributes: userSearchAttributes(userKey),
        staticSummary: `Store a ${body.type ?? 'untyped'} memory for ${userKey}`,
      }),
    );
    const waited = await waitForResult(deps.temporal, () => handle.result(), deps.config.reliability.workflowWaitMs);
    // Accepted and durable: the memory is written when the workflow gets to it.
    if (!waited.done) return { pending: true, workflowId };
    decision = waited.result;
  } catch (err) {
    throw workflowCallError(err, { workflowId, failed: 'storing the memory failed' });
  }
  const id = decision.memoryId;
  const memory = id ? await deps.memories.get({ userId: userKey, id }) : undefined;
  // Stored, then deleted before the read-back by a request that raced this one (a hard delete of
  // the memory a re-statement reinforced, a purge): the caller's data is not lost, it was removed.
  if (!memory) {
    throw new MemoryServiceError(ErrorCode.conflict, 'the memory was deleted by another request while this one stored it; send it again to store it anew', {
      workflowId,
      ...(id ? { memoryId: id } : {}),
      decision: decision.action,
    });
  }
  return { memory, decision: { action: decision.action, reason: decision.reason }, workflowId };
}
