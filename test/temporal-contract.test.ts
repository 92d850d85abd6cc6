import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import * as contract from '../src/client/temporal-contract';
import { SEARCH_ATTRIBUTES } from '../workflows/shared/search-attributes';
import { PURGE_WORKFLOW_TYPE } from '../src/core/privacy/purge';
import { ENCRYPTED_ENCODING, EncryptionCodec } from '../src/security/payload-codec';
import { crossesToCaller } from '../src/security/payload-subject';
import { dismissSignal, ExtractMemories, extractMemoriesWorkflow, MemoryDecision, PurgeUser, reminderWorkflow, reminderWorkflowId, rescheduleUpdate, snoozeSignal, stateQuery, storeMemoryWorkflow } from '../workflows';
import { CALLER_ACTIVITY_TYPES, CALLER_METADATA_KEY, CALLER_WORKFLOW_TYPES, encodeSubject, SUBJECT_METADATA_KEY } from '../workflows/shared/payload-subject';

const ROOT = join(import.meta.dirname, '..');

describe('the Temporal contract module names what the workers run', () => {
  it('workflow types, signal/update/query names and workflow ids match the workflow code', () => {
    expect(ExtractMemories.name).toBe(contract.EXTRACT_MEMORIES_WORKFLOW);
    expect(extractMemoriesWorkflow.name).toBe(contract.EXTRACT_MEMORIES_INTERNAL_WORKFLOW);
    expect(reminderWorkflow.name).toBe(contract.REMINDER_WORKFLOW);
    expect(storeMemoryWorkflow.name).toBe(contract.STORE_MEMORY_WORKFLOW);
    expect(MemoryDecision.name).toBe(contract.MEMORY_DECISION_WORKFLOW);
    expect(PurgeUser.name).toBe(contract.PURGE_USER_WORKFLOW);
    expect(PURGE_WORKFLOW_TYPE).toBe(contract.PURGE_USER_WORKFLOW);
    expect(snoozeSignal.name).toBe(contract.REMINDER_SIGNALS.snooze);
    expect(dismissSignal.name).toBe(contract.REMINDER_SIGNALS.dismiss);
    expect(rescheduleUpdate.name).toBe(contract.REMINDER_UPDATES.reschedule);
    expect(stateQuery.name).toBe(contract.REMINDER_QUERIES.state);
    expect(contract.reminderWorkflowId('acme:abc', 'r1')).toBe(reminderWorkflowId('acme:abc', 'r1'));
    for (const name of Object.values(contract.MEMORY_SEARCH_ATTRIBUTES)) expect(Object.keys(SEARCH_ATTRIBUTES)).toContain(name);
    expect(contract.userWorkflowsQuery('acme:xy')).toBe("MemoryUserId = 'acme:xy'");
    // A key is an id, never free text: one that is not is refused rather than quoted or mangled.
    expect(() => contract.userWorkflowsQuery("acme:x'y")).toThrow(TypeError);
  });

  it('imports nothing at run time: callers load it without server code or Temporal packages', () => {
    const source = readFileSync(join(ROOT, 'src/client/temporal-contract.ts'), 'utf8');
    const imports = source.split('\n').filter((l) => /^import\s/.test(l));
    expect(imports.length).toBeGreaterThan(0);
    for (const line of imports) expect(line).toMatch(/^import type /);
  });

  it('lists exactly the contract types as crossing to callers', () => {
    expect([...CALLER_WORKFLOW_TYPES]).toEqual([contract.EXTRACT_MEMORIES_WORKFLOW]);
    expect([...CALLER_ACTIVITY_TYPES]).toEqual([contract.RECALL_ACTIVITY]);
  });
});

describe('payloads that cross to a caller stay in clear', () => {
  const keys = {
    byId: new Map<string, Buffer>(),
    async encryptionKey() {
      const keyId = randomUUID();
      this.byId.set(keyId, randomBytes(32));
      return { keyId, key: this.byId.get(keyId)! };
    },
    async decryptionKey(keyId: string) {
      return this.byId.get(keyId)!;
    },
  };
  const encoding = (p: Payload) => Buffer.from(p.metadata![METADATA_ENCODING_KEY]!).toString();

  it('leaves a payload marked by the sandbox converter in clear, without the mark, and encrypts the others', async () => {
    const codec = new EncryptionCodec(keys, () => undefined, crossesToCaller);
    const value = { decisions: ['我对花生过敏'] };
    const plain = defaultPayloadConverter.toPayload(value);
    const marked: Payload = { ...plain, metadata: { ...plain.metadata, [CALLER_METADATA_KEY]: new TextEncoder().encode('1'), [SUBJECT_METADATA_KEY]: encodeSubject('acme:u') } };
    const [toCaller, internal] = await codec.encode([marked, plain]);
    expect(encoding(toCaller!)).toBe('json/plain');
    expect(Object.keys(toCaller!.metadata!)).toEqual([METADATA_ENCODING_KEY]);
    expect(defaultPayloadConverter.fromPayload(toCaller!)).toEqual(value);
    expect(encoding(internal!)).toBe(ENCRYPTED_ENCODING);
  });

  it('the result of a contract activity crosses; nothing else does (other activities, the codec server, the API)', async () => {
    expect(await new MockActivityEnvironment({ activityType: contract.RECALL_ACTIVITY }).run(async () => crossesToCaller())).toBe(true);
    expect(await new MockActivityEnvironment({ activityType: 'decideAndApply' }).run(async () => crossesToCaller())).toBe(false);
    expect(crossesToCaller()).toBe(false);
  });
});

describe('docs/integrate-temporal.md', () => {
  it('quotes the example verbatim: every snippet is in the file it names', () => {
    const doc = readFileSync(join(ROOT, 'docs/integrate-temporal.md'), 'utf8');
    const snippets = [...doc.matchAll(/<!-- snippet: (\S+) -->\n```(?:ts|python)\n([\s\S]*?)\n```/g)];
    expect(snippets.length).toBeGreaterThanOrEqual(6);
    for (const [, file, code] of snippets) expect(readFileSync(join(ROOT, file!), 'utf8'), `snippet from ${file}`).toContain(code);
  });
});
