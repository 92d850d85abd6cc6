import { describe, expect, it } from 'vitest';
import { ConcurrencyGate, Semaphore } from '../src/api/concurrency';
import { loadConfig } from '../src/config';
import { MemoryServiceError } from '../src/core/errors';
import { policyFor, policyRefusal, proxyCostUnits } from '../src/proxy/policy';

describe('proxy policy', () => {
  const config = loadConfig({
    PROXY_ALLOWED_MODELS: 'gpt-a, gpt-b',
    PROXY_MAX_N: '2',
    PROXY_MAX_TOKENS: '2000',
    PROXY_TENANT_POLICIES: JSON.stringify({ rich: { models: '*', maxTokens: 8000, tools: true } }),
  }).proxy;
  const base = policyFor(config, 'anyone');
  const rich = policyFor(config, 'rich');

  it('takes the defaults, and a tenant’s own fields over them', () => {
    expect(base).toEqual({ models: ['gpt-a', 'gpt-b'], maxN: 2, maxTokens: 2000, tools: false });
    expect(rich).toEqual({ models: null, maxN: 2, maxTokens: 8000, tools: true });
    expect(policyFor(config, 'constructor')).toBe(base);
    expect(loadConfig({}).proxy.defaultPolicy).toEqual({ models: null, maxN: 1, maxTokens: 4096, tools: false });
  });

  it('fails fast on a malformed PROXY_TENANT_POLICIES', () => {
    expect(() => loadConfig({ PROXY_TENANT_POLICIES: '{nope' })).toThrow(/PROXY_TENANT_POLICIES/);
    expect(() => loadConfig({ PROXY_TENANT_POLICIES: JSON.stringify({ t: { maxN: 0 } }) })).toThrow(/PROXY_TENANT_POLICIES/);
    expect(() => loadConfig({ PROXY_TENANT_POLICIES: JSON.stringify({ t: { unknown: 1 } }) })).toThrow(/PROXY_TENANT_POLICIES/);
  });

  it('names the first field it refuses', () => {
    const ok = { model: 'gpt-a', messages: [], n: 2, max_tokens: 2000, temperature: 0.3 };
    expect(policyRefusal(ok, base)).toBeUndefined();
    expect(policyRefusal({ ...ok, audio: {} }, base)?.field).toBe('audio');
    expect(policyRefusal({ ...ok, model: 'gpt-c' }, base)?.field).toBe('model');
    expect(policyRefusal({ ...ok, n: 3 }, base)?.field).toBe('n');
    expect(policyRefusal({ ...ok, max_completion_tokens: 2001 }, base)?.field).toBe('max_completion_tokens');
    expect(policyRefusal({ ...ok, functions: [] }, base)?.field).toBe('functions');
    expect(policyRefusal({ ...ok, model: 'gpt-c', tools: [], max_tokens: 8000 }, rich)).toBeUndefined();
  });

  it('costs choices × completion-token classes, capped by the policy', () => {
    expect(proxyCostUnits({ model: 'gpt-a' }, base, 1000)).toBe(2); // the cap, 2000 tokens
    expect(proxyCostUnits({ max_tokens: 100 }, base, 1000)).toBe(1);
    expect(proxyCostUnits({ n: 2, max_tokens: 1500 }, base, 1000)).toBe(4);
    expect(proxyCostUnits({ n: 100, max_tokens: 1e9 }, base, 1000)).toBe(4);
  });
});

describe('concurrency bounds', () => {
  it('a gate takes a slot under every key or none, and gives it back once', () => {
    const gate = new ConcurrencyGate('streams');
    const limits = [
      { key: 'u', scope: 'for this user', max: 1 },
      { key: 'k', scope: 'for this API key', max: 2 },
    ];
    const release = gate.acquire(limits, 5);
    expect(() => gate.acquire(limits, 5)).toThrow(MemoryServiceError);
    expect(gate.count('k')).toBe(1);
    release();
    release();
    expect(gate.count('u')).toBe(0);
    expect(gate.count('k')).toBe(0);
  });

  it('a semaphore runs at most max at once, queues the rest and refuses past the wait', async () => {
    const sem = new Semaphore('snapshots', 1);
    let running = 0;
    let peak = 0;
    const work = () => sem.run(async () => {
      peak = Math.max(peak, ++running);
      await new Promise((r) => setTimeout(r, 20));
      running--;
      return 'ok';
    }, 1000);
    expect(await Promise.all([work(), work(), work()])).toEqual(['ok', 'ok', 'ok']);
    expect(peak).toBe(1);
    const long = sem.run(() => new Promise((r) => setTimeout(r, 200)), 1000);
    await expect(sem.run(async () => 'late', 20)).rejects.toMatchObject({ code: 'concurrency_limited' });
    await long;
    expect(await sem.run(async () => 'free', 20)).toBe('free');
  });
});
