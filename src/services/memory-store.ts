import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { MemoryReader } from '../core/ports';
import type { Memory, MemoryType } from '../core/types';
import type { SubjectKeys } from '../security/subject';
import { storeMemoryWorkflow } from '../../workflows';
import { workflowCallError } from '../api/workflow-failures';
import { userSearchAttributes } from '../../workflows/search-attributes';

export interface StoreMemoryDeps {
  memories: MemoryReader;
  temporal: Client;
  taskQueue: string;
  subjects: SubjectKeys;
}

export interface StoreMemoryRequest {
  text: string;
  type: MemoryType;
  scope?: 'global' | 'task';
  confidence?: number;
  importance?: number;
  keywords?: string[];
  metadata?: Record<string, unknown>;
  expiresAt?: string;
  at?: string;
  /** Makes retries idempotent: one workflow (and one decision) per request id. */
  requestId?: string;
}

/**
 * Stores one memory through the StoreMemory workflow (decision, PostgreSQL row, Chroma vector) and
 * returns the memory the decision landed on — POST …/memories and the MCP tool `memory_add`.
 */
export async function storeMemory(deps: StoreMemoryDeps, userKey: string, body: StoreMemoryRequest): Promise<{ memory: Memory; decision: { action: string; reason: string }; workflowId: string }> {
  const requestId = body.requestId ?? randomUUID();
  const workflowId = `store:${userKey}:${deps.subjects.ref(userKey, 'request', requestId)}`;
  let decision;
  try {
    decision = await deps.temporal.workflow.execute(storeMemoryWorkflow, {
      taskQueue: deps.taskQueue,
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ userId: userKey, requestId, text: body.text, type: body.type, scope: body.scope, confidence: body.confidence, importance: body.importance, keywords: body.keywords, metadata: body.metadata, expiresAt: body.expiresAt, at: body.at ?? new Date().toISOString() }],
      typedSearchAttributes: userSearchAttributes(userKey),
      staticSummary: `Store a ${body.type} memory for ${userKey}`,
    });
  } catch (err) {
    throw workflowCallError(err, { workflowId, failed: 'storing the memory failed' });
  }
  const id = decision.memoryId;
  const memory = id ? await deps.memories.get({ userId: userKey, id }) : undefined;
  if (!memory) throw new MemoryServiceError(ErrorCode.internal, 'memory missing after store', { workflowId });
  return { memory, decision: { action: decision.action, reason: decision.reason }, workflowId };
}
