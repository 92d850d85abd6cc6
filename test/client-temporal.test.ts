import { describe, expect, it } from 'vitest';
import * as workflows from '../workflows';
import { SEARCH_ATTRIBUTES } from '../workflows/shared/search-attributes';
import { purgeWorkflowId } from '../src/core/privacy/purge';
import { QueryName, SearchAttribute, SignalName, UpdateName, WorkflowType, parseWorkflowId, personaWorkflowId, reinforcementWorkflowId, reminderWorkflowId, tenantWorkflowsQuery, userWorkflowsQuery } from '../src/client/temporal-contract';

// The client package restates the Temporal names without importing workflow code; this keeps the
// two from drifting apart.
describe('client package: Temporal names and ids', () => {
  const userKey = 'tenant-a:ABCDEFGHIJKLMNOPQRSTUVWXYZ';

  it('names every workflow type the worker registers', () => {
    const registered = Object.entries(workflows)
      .filter(([, v]) => typeof v === 'function' && !/WorkflowId$/.test(v.name))
      .map(([name]) => name)
      .sort();
    expect(Object.values(WorkflowType).sort()).toEqual(registered);
  });

  it('names the signals, updates and queries as the workflows define them', () => {
    expect(SignalName.messagesAdded).toBe(workflows.messagesAddedSignal.name);
    expect(SignalName.conversationEnded).toBe(workflows.conversationEndedSignal.name);
    expect(SignalName.snooze).toBe(workflows.snoozeSignal.name);
    expect(SignalName.dismiss).toBe(workflows.dismissSignal.name);
    expect(SignalName.memoriesChanged).toBe(workflows.memoriesChangedSignal.name);
    expect(UpdateName.reschedule).toBe(workflows.rescheduleUpdate.name);
    expect(QueryName.reminderState).toBe(workflows.stateQuery.name);
  });

  it('names the search attributes the stack registers', () => {
    expect(Object.values(SearchAttribute).sort()).toEqual(Object.keys(SEARCH_ATTRIBUTES).sort());
  });

  it('builds and reads workflow ids as the workflows do', () => {
    expect(reminderWorkflowId(userKey, 'r1')).toBe(workflows.reminderWorkflowId(userKey, 'r1'));
    expect(reinforcementWorkflowId(userKey)).toBe(workflows.reinforcementWorkflowId(userKey));
    expect(parseWorkflowId(workflows.conversationWorkflowId(userKey, 'REF'))).toEqual({ kind: 'conversation', userKey, ref: 'REF' });
    expect(parseWorkflowId(workflows.extractWorkflowId(userKey, 'REF'))).toEqual({ kind: 'extract', userKey, ref: 'REF' });
    expect(parseWorkflowId(workflows.reinforcementWorkflowId(userKey))).toEqual({ kind: 'reinforce', userKey });
    expect(personaWorkflowId(userKey)).toBe(workflows.personaWorkflowId(userKey));
    expect(parseWorkflowId(workflows.personaWorkflowId(userKey))).toEqual({ kind: 'persona', userKey });
    expect(parseWorkflowId(purgeWorkflowId('tenant-a', 'UREF'))).toEqual({ kind: 'purge', ref: 'UREF' });
    expect(parseWorkflowId('something-else')).toBeUndefined();
  });

  it('writes visibility queries only for ids', () => {
    expect(userWorkflowsQuery(userKey, { type: 'reminderWorkflow' })).toBe(`MemoryUserId = '${userKey}' AND WorkflowType = 'reminderWorkflow'`);
    expect(tenantWorkflowsQuery('tenant-a')).toBe("MemoryTenant = 'tenant-a'");
    expect(() => userWorkflowsQuery("x' OR '1'='1")).toThrow(TypeError);
    expect(() => tenantWorkflowsQuery("a' OR 1=1")).toThrow(TypeError);
  });
});
