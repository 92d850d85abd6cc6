import type { SearchAttributePair, SearchAttributes, TypedSearchAttributes } from '@temporalio/common';
import { inWorkflowContext, workflowInfo } from '@temporalio/workflow';
import { EXTRACT_MEMORIES_WORKFLOW, RECALL_ACTIVITY } from '../../src/client/temporal-contract';
import { MemoryUserIdKey } from './search-attributes';

// Who a Temporal payload is about, so the encryption codec can pick that user's data key.
// A PayloadCodec only sees bytes; the subject reaches it as a metadata entry that the payload
// converter adds inside the workflow sandbox and the codec removes before encrypting. This module
// runs in the sandbox too: no Node builtins, no AsyncLocalStorage (those live in
// src/security/payload-subject.ts).

/** Payload metadata entry naming the payload's subject (a user key); never leaves the codec in clear. */
export const SUBJECT_METADATA_KEY = 'jarvis-subject';

/**
 * Activity header naming the scheduling workflow's subject, so the activity worker encrypts the
 * activity's result with the same user's key. Headers are not encrypted: it holds the
 * pseudonymous user key, which is in the MemoryUserId search attribute anyway.
 */
export const SUBJECT_HEADER = 'jarvis-subject';

/**
 * What crosses to a caller's worker, which reads it with Temporal's default data converter
 * (src/client/temporal-contract.ts): every payload a workflow of these types sends out (its
 * result, its failure, its children's and activities' inputs — all the caller's own data or
 * derived for the caller), and the result and failure of activities of these types. The codec
 * leaves them in clear; the caller's history is the caller's to protect. Nothing else is here:
 * the extraction a caller's workflow starts runs as a child of its own, fully encrypted.
 */
export const CALLER_WORKFLOW_TYPES: ReadonlySet<string> = new Set([EXTRACT_MEMORIES_WORKFLOW]);
export const CALLER_ACTIVITY_TYPES: ReadonlySet<string> = new Set([RECALL_ACTIVITY]);

/** Payload metadata entry set by the sandbox converter on a payload that crosses to a caller; the codec removes it. */
export const CALLER_METADATA_KEY = 'jarvis-to-caller';

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

export function encodeSubject(userKey: string): Uint8Array {
  return utf8.encode(userKey);
}

export function decodeSubject(bytes: Uint8Array | null | undefined): string | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  return fromUtf8.decode(bytes);
}

/**
 * The user key in a set of search attributes (typed pairs, a TypedSearchAttributes, or the
 * legacy record), as set on every per-user workflow and schedule: `MemoryUserId`.
 */
export function subjectFromSearchAttributes(typed?: SearchAttributePair[] | TypedSearchAttributes, legacy?: SearchAttributes): string | undefined {
  if (typed) {
    if (Array.isArray(typed)) {
      const pair = typed.find((p) => p.key.name === MemoryUserIdKey.name);
      if (typeof pair?.value === 'string' && pair.value) return pair.value;
    } else {
      const value = typed.get(MemoryUserIdKey);
      if (value) return value;
    }
  }
  const raw = legacy?.[MemoryUserIdKey.name];
  const first = Array.isArray(raw) ? raw[0] : undefined;
  return typeof first === 'string' && first ? first : undefined;
}

/** Inside a workflow: the user the running workflow belongs to, from its MemoryUserId search attribute (kept current by upserts). */
export function workflowSubject(): string | undefined {
  if (!inWorkflowContext()) return undefined;
  return subjectFromSearchAttributes(workflowInfo().typedSearchAttributes);
}

/** Inside a workflow: whether the running workflow's payloads cross to a caller (CALLER_WORKFLOW_TYPES). */
export function workflowCrossesToCaller(): boolean {
  return inWorkflowContext() && CALLER_WORKFLOW_TYPES.has(workflowInfo().workflowType);
}
