import { describe, expect, it } from 'vitest';
import { LlmPersonaCondenser } from '../../src/adapters/llm/persona-condenser';
import type { PersonaStore, StoredPersona } from '../../src/core/persona/ports';
import type { Memory } from '../../src/core/types';
import { rebuildPersona, type PersonaDeps } from '../../src/persona/persona';
import { ScriptedChatModel } from '../support/scripted-model';

const NOW = new Date('2026-09-01T00:00:00Z');

function memory(id: string, text: string, importance = 0.5): Memory {
  return {
    id, userId: 'u1', text, type: 'fact', status: 'active', scope: 'global', confidence: 0.9, importance, importanceLevel: 'medium',
    frequencyCount: 1, decayScore: 1, emotionTags: [], associatedTopics: [], keywords: [], source: { role: 'user' }, metadata: {},
    createdAt: NOW, updatedAt: NOW, lastRecalledAt: null, lastAccessedAt: NOW, expiresAt: null, supersedes: null, supersededBy: null, via: 'extraction', pending: false,
  };
}

/** The profile table in memory, with the same unchanged rule as PostgreSQL's. */
function memoryStore(): PersonaStore & { rows: Map<string, StoredPersona>; writes: number } {
  const rows = new Map<string, StoredPersona>();
  const store = {
    rows,
    writes: 0,
    get: async ({ userId }: { userId: string }) => rows.get(userId),
    forRecall: async () => undefined,
    save: async ({ userId, profile, memoryVersion, builtAt }: Parameters<PersonaStore['save']>[0]) => {
      const old = rows.get(userId);
      if (old && old.text === profile.text && old.memoryIds.join() === profile.memoryIds.join()) return 'unchanged' as const;
      rows.set(userId, { userId, ...profile, memoryVersion, builtAt });
      store.writes++;
      return 'written' as const;
    },
    remove: async ({ userId }: { userId: string }) => rows.delete(userId),
  };
  return store;
}

function depsWith(memories: Memory[], opts: { model?: ScriptedChatModel } = {}): PersonaDeps & { personas: ReturnType<typeof memoryStore> } {
  return {
    memories: { byTypes: async () => memories } as unknown as PersonaDeps['memories'],
    personas: memoryStore(),
    config: { recall: { tokenBudget: 800, personaShare: 0.15, personaBuilder: opts.model ? 'llm' : 'template' } } as unknown as PersonaDeps['config'],
    ...(opts.model ? { personaCondenser: new LlmPersonaCondenser(opts.model, 'scripted') } : {}),
  };
}

const MEMORIES = [memory('a', '我对花生过敏', 0.9), memory('b', '我住在上海'), memory('c', '我是软件工程师')];

describe('rebuildPersona', () => {
  it('writes the template offline, and nothing when the memories did not change', async () => {
    const deps = depsWith(MEMORIES);
    expect(await rebuildPersona(deps, { userId: 'u1', now: NOW })).toMatchObject({ action: 'written', builder: 'template', lines: 3 });
    expect(await rebuildPersona(deps, { userId: 'u1', now: NOW })).toMatchObject({ action: 'unchanged' });
    expect(deps.personas.writes).toBe(1);
  });

  it('uses the model’s condensed lines when they pass the checks, and says what it was asked', async () => {
    const model = new ScriptedChatModel({ lines: [{ text: '花生过敏', facts: [1] }, { text: '上海的软件工程师', facts: [2, 3] }] });
    const deps = depsWith(MEMORIES, { model });
    expect(await rebuildPersona(deps, { userId: 'u1', now: NOW })).toMatchObject({ action: 'written', builder: 'llm', lines: 2 });
    expect(deps.personas.rows.get('u1')?.text).toBe('- 花生过敏\n- 上海的软件工程师');
    expect(String(model.prompts[0]![1]!.content)).toContain('1. 健康与饮食：我对花生过敏');
    // Same memories: no second model call.
    expect(await rebuildPersona(deps, { userId: 'u1', now: NOW })).toMatchObject({ action: 'unchanged' });
    expect(model.prompts).toHaveLength(1);
  });

  it('falls back to the template on an unusable reply, a dropped health fact or a failed call', async () => {
    for (const reply of ['not json at all', { lines: [{ text: '上海的软件工程师', facts: [2, 3] }] }]) {
      const deps = depsWith(MEMORIES, { model: new ScriptedChatModel(reply) });
      const result = await rebuildPersona(deps, { userId: 'u1', now: NOW });
      expect(result).toMatchObject({ action: 'written', builder: 'template', fallback: expect.any(String) });
      expect(deps.personas.rows.get('u1')?.lines[0]?.text).toBe('- 健康与饮食：我对花生过敏');
    }
    const failing = depsWith(MEMORIES);
    failing.config.recall.personaBuilder = 'llm';
    failing.personaCondenser = { name: 'down', condense: async () => Promise.reject(new Error('connection refused')) };
    expect(await rebuildPersona(failing, { userId: 'u1', now: NOW })).toMatchObject({ builder: 'template', fallback: expect.stringContaining('connection refused') });
  });

  it('removes the profile when nothing durable is left', async () => {
    const deps = depsWith(MEMORIES);
    await rebuildPersona(deps, { userId: 'u1', now: NOW });
    const emptied = { ...deps, memories: { byTypes: async () => [] } as unknown as PersonaDeps['memories'] };
    expect(await rebuildPersona(emptied, { userId: 'u1', now: NOW })).toMatchObject({ action: 'removed' });
    expect(deps.personas.rows.size).toBe(0);
  });
});
