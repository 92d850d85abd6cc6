import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as contract from '../src/persona/contract';
import * as bundle from '../workflows';

describe('the persona capability contract', () => {
  it('names the workflow, signal and id that the bundle registers and the recorded histories carry', () => {
    const wf = (bundle as Record<string, unknown>)[contract.PersonaWorkflows.rebuild];
    expect(typeof wf).toBe('function');
    expect((wf as { name: string }).name).toBe('RebuildPersona');
    expect(bundle.memoriesChangedSignal).toBe(contract.memoriesChangedSignal);
    expect(contract.memoriesChangedSignal.name).toBe('memoriesChanged');
    expect(bundle.personaWorkflowId('u1')).toBe('persona:u1');
  });

  it('is what the persona signaller uses: it imports nothing of workflows/ but search attributes', () => {
    const source = readFileSync('src/persona/persona-signal.ts', 'utf8');
    const workflowImports = [...source.matchAll(/from '([^']*workflows[^']*)'/g)].map((m) => m[1]);
    expect(workflowImports).toEqual(['../../workflows/shared/search-attributes']);
  });
});
