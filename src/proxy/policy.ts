/**
 * What a tenant's proxied chat request may ask of the upstream, which runs on the operator's key:
 * the fields that may pass, the models, how many choices and completion tokens, whether tools
 * may. Pure: the route refuses what this names, and the rate limiter charges what it costs.
 */
import type { ProxyConfig, ProxyPolicy } from '../config';

/**
 * Chat completions fields let through to the upstream. Anything else — a field this list does not
 * know, or one an upstream would bill differently (`audio`, `modalities`, `prediction`,
 * `web_search_options`, `store`, `metadata`, `service_tier`) — is refused rather than forwarded.
 */
export const PASSED_FIELDS = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'n',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'seed',
  'user',
  'response_format',
  'reasoning_effort',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'functions',
  'function_call',
]);

/** Fields that hand the upstream model tools (PROXY_ALLOW_TOOLS / the tenant's `tools`). */
export const TOOL_FIELDS = new Set(['tools', 'tool_choice', 'parallel_tool_calls', 'functions', 'function_call']);

export function policyFor(config: Pick<ProxyConfig, 'defaultPolicy' | 'tenantPolicies'>, tenantId: string | undefined): ProxyPolicy {
  return (tenantId !== undefined && Object.hasOwn(config.tenantPolicies, tenantId) ? config.tenantPolicies[tenantId] : undefined) ?? config.defaultPolicy;
}

/** A refusal: the field at fault, and why (said to the caller as it is). */
export interface PolicyRefusal {
  field: string;
  reason: string;
}

const positiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;

/** The first thing in `body` the policy does not let through, or undefined. */
export function policyRefusal(body: Record<string, unknown>, policy: ProxyPolicy): PolicyRefusal | undefined {
  for (const field of Object.keys(body)) {
    if (!PASSED_FIELDS.has(field)) return { field, reason: `the field "${field.slice(0, 64)}" is not passed to the upstream` };
    if (TOOL_FIELDS.has(field) && !policy.tools) return { field, reason: `tools are not allowed for this tenant ("${field}")` };
  }
  if (policy.models !== null && !policy.models.includes(String(body.model))) return { field: 'model', reason: 'this model is not allowed for this tenant' };
  if (body.n !== undefined && body.n !== null) {
    if (!positiveInt(body.n)) return { field: 'n', reason: 'n must be a positive whole number' };
    if (body.n > policy.maxN) return { field: 'n', reason: `n may be at most ${policy.maxN} for this tenant` };
  }
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const v = body[field];
    if (v === undefined || v === null) continue;
    if (!positiveInt(v)) return { field, reason: `${field} must be a positive whole number` };
    if (v > policy.maxTokens) return { field, reason: `${field} may be at most ${policy.maxTokens} for this tenant` };
  }
  return undefined;
}

/** The completion tokens a request may cost per choice: what it asks for, else the policy's cap, never above it. */
export function requestedTokens(body: Record<string, unknown>, policy: ProxyPolicy): number {
  const asked = [body.max_tokens, body.max_completion_tokens].filter(positiveInt);
  return Math.min(policy.maxTokens, asked.length > 0 ? Math.max(...asked) : policy.maxTokens);
}

/**
 * `llm` budget units a request spends: choices × ceil(completion tokens / tokens per unit), with
 * both capped by the policy (a request the policy refuses is charged no more than the largest it
 * allows, so a refusal cannot be used to drain another budget faster than a real request would).
 */
export function proxyCostUnits(body: unknown, policy: ProxyPolicy, tokensPerUnit: number): number {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const n = positiveInt(b.n) ? Math.min(b.n, policy.maxN) : 1;
  return n * Math.max(1, Math.ceil(requestedTokens(b, policy) / tokensPerUnit));
}
