import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { MemoryReader } from '../core/ports/memory';
import { screenDirectWrite, type ProvenanceScreen } from '../core/memory/direct-write';
import type { Memory } from '../core/types';
import { segmenter as jiebaSegmenter } from '../shared/segmentation';
import { MemoryWorkflows, STORE_REQUEST_MEMO_KEY, type StoreMemoryInput, type StoreMemoryWorkflow } from './contract';
import { canonicalStoreRequest } from './store-request';
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
 * (and one decision) per request id, and the same id with another body is refused.
 */
export type StoreMemoryRequest = Omit<StoreMemoryInput, 'userId' | 'requestId' | 'at' | 'via' | 'requestFingerprint'> & { at?: string; requestId?: string };

/** The refusal of a request id sent again with another body: nothing of this request was written. */
function requestIdReused(requestId: string, workflowId: string, cause?: unknown): MemoryServiceError {
  return new MemoryServiceError(
    ErrorCode.requestIdReused,
    'this requestId was sent before with another body: the first request stands and nothing of this one was written; send it under a new requestId',
    { requestId, workflowId },
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Extraction's provenance screen, before anything is durable: what it would refuse in the user's
 * message, a direct write refuses, whole, with the screen's reason (nothing half-written). It needs
 * nothing stored, so the API runs it before it registers a user id seen for the first time too.
 * Without a type, screened as the plain fact it is until the worker's extractor infers more (and screens again).
 */
export function refuseByProvenance(deps: Pick<StoreMemoryDeps, 'provenanceScreen'>, body: Pick<StoreMemoryRequest, 'text' | 'type' | 'scope'>, via: NonNullable<StoreMemoryInput['via']>): void {
  const refusal = screenDirectWrite({ text: body.text, type: body.type ?? 'fact', scope: body.scope }, { provenanceScreen: deps.provenanceScreen, segmenter: jiebaSegmenter });
  if (refusal) throw new MemoryServiceError(ErrorCode.provenanceRefused, `refused by the provenance screen extraction applies: ${refusal.reason}`, { reason: refusal.reason, via });
}

/** The stored memory, or (`pending`) the workflow that is still storing it after WORKFLOW_WAIT_TIMEOUT_MS. */
export type StoreMemoryResult = { pending?: false; memory: Memory; decision: { action: string; reason: string }; workflowId: string } | { pending: true; workflowId: string };

/**
 * Stores one memory through the StoreMemory workflow (decision, PostgreSQL row, Chroma vector) and
 * returns the memory the decision landed on — POST …/memories and the MCP tool `memory_add`. A
 * workflow slower than WORKFLOW_WAIT_TIMEOUT_MS goes on and the answer is `pending` with its id
 * (the same requestId joins the same workflow). A requestId sent before with another body
 * (src/memory/store-request.ts says what "the same body" is) is refused with `request_id_reused`:
 * checked against the running workflow's memo when the request joins it, and, once the first run
 * is over, by the decision's record, which the new run finds under the same key.
 */
export async function storeMemory(deps: StoreMemoryDeps, userKey: string, body: StoreMemoryRequest, via: NonNullable<StoreMemoryInput['via']> = 'api'): Promise<StoreMemoryResult> {
  refuseByProvenance(deps, body, via);
  const requestId = body.requestId ?? randomUUID();
  const workflowId = `store:${userKey}:${deps.subjects.ref(userKey, 'request', requestId)}`;
  // Keyed like the request id: the memo and the decision's record hold no plain digest of the text.
  const requestFingerprint = deps.subjects.ref(userKey, 'store-request', canonicalStoreRequest({ ...body, via }));
  let decision;
  try {
    const handle = await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () =>
      deps.temporal.workflow.start<StoreMemoryWorkflow>(MemoryWorkflows.store, {
        taskQueue: deps.taskQueue,
        workflowId,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [
          {
            userId: userKey,
            requestId,
            text: body.text,
            type: body.type,
            scope: body.scope,
            confidence: body.confidence,
            importance: body.importance,
            keywords: body.keywords,
            metadata: body.metadata,
            expiresAt: body.expiresAt,
            at: body.at ?? new Date().toISOString(),
            via,
            requestFingerprint,
          },
        ],
        memo: { [STORE_REQUEST_MEMO_KEY]: requestFingerprint },
        typedSearchAttributes: userSearchAttributes(userKey),
        staticSummary: `Store a ${body.type ?? 'untyped'} memory for ${userKey}`,
      }),
    );
    // The client's own id may name a run another request started and that is still going (the
    // start joined it): its memo says whose it is. A generated id names nobody else's run.
    if (body.requestId) {
      const runOf = await fingerprintOfRun(deps, workflowId, handle.firstExecutionRunId);
      // Started or joined, then Temporal stopped answering: the run goes on, as after a lost wait.
      if (runOf.unreachable) return { pending: true, workflowId };
      if (runOf.fingerprint !== undefined && runOf.fingerprint !== requestFingerprint) throw requestIdReused(requestId, workflowId);
    }
    const waited = await waitForResult(deps.temporal, () => handle.result(), deps.config.reliability.workflowWaitMs);
    // Accepted and durable: the memory is written when the workflow gets to it.
    if (!waited.done) return { pending: true, workflowId };
    decision = waited.result;
  } catch (err) {
    const failure = workflowCallError(err, { workflowId, failed: 'storing the memory failed' });
    // The new run found the decision another body recorded under this request id.
    if (failure.code === ErrorCode.requestIdReused && !(err instanceof MemoryServiceError)) throw requestIdReused(requestId, workflowId, err);
    throw failure;
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

/**
 * The fingerprint a StoreMemory run was started with (undefined for runs from before runs carried
 * one), or `unreachable` when Temporal does not answer within TEMPORAL_CALL_TIMEOUT_MS.
 */
async function fingerprintOfRun(deps: StoreMemoryDeps, workflowId: string, runId: string): Promise<{ unreachable: true } | { unreachable: false; fingerprint: string | undefined }> {
  try {
    const described = await withTemporalDeadline(deps.temporal, deps.config.reliability.temporalCallMs, () => deps.temporal.workflow.getHandle(workflowId, runId).describe());
    const fingerprint = described.memo?.[STORE_REQUEST_MEMO_KEY];
    return { unreachable: false, fingerprint: typeof fingerprint === 'string' ? fingerprint : undefined };
  } catch {
    return { unreachable: true };
  }
}
