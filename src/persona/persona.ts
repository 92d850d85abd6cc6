import { createHash } from 'node:crypto';
import type { PersonaCondenser, PersonaStore } from '../core/persona/ports';
import { buildTemplatePersona, condensedPersona, condensePrompt, CONDENSE_SYSTEM_PROMPT, PERSONA_TYPES, type PersonaBuilder, type PersonaProfile } from '../core/persona/profile';
import type { ServiceDeps } from '../shared/deps';

/** What rebuilding a persona needs: the memory reader, the profile table, the optional model. */
export type PersonaDeps = Pick<ServiceDeps, 'memories' | 'config' | 'personaCondenser'> & { personas: PersonaStore };

/** What a rebuild did (the activity's result, in Temporal UI). */
export interface PersonaRebuildResult {
  /** written: a new profile; unchanged: same memories or same text; stale: a memory was retired meanwhile; removed/empty: nothing durable to say. */
  action: 'written' | 'unchanged' | 'stale' | 'removed' | 'empty';
  builder?: PersonaBuilder;
  lines: number;
  tokens: number;
  /** Why the model's profile was not used (the template was written instead). */
  fallback?: string;
}

/** Active memories a rebuild reads, most important first; the profile keeps far fewer. */
const SOURCE_K = 200;

/** Tokens the persona may take: its share of the configured budget (a request's smaller budget cuts it further in recall). */
export function personaTokenBudget(config: Pick<ServiceDeps['config'], 'recall'>): number {
  return Math.floor(config.recall.tokenBudget * config.recall.personaShare);
}

/** Identifies what a profile is built from (the template) and how, so an unchanged source skips the model. */
function versionOf(template: PersonaProfile, builder: string): string {
  return createHash('sha256')
    .update(JSON.stringify({ builder, language: template.language, lines: template.lines }))
    .digest('hex')
    .slice(0, 32);
}

/**
 * Rebuilds one user's persona from their active memories: the template (pure, offline), then —
 * with a model configured — the model's condensed version of it, which is used only when it cites
 * the template's facts, keeps every health fact and fits the budget; otherwise, and on any model
 * error, the template is written. Idempotent: the same source memories skip the build, and the same
 * text is not written again.
 */
export async function rebuildPersona(deps: PersonaDeps, input: { userId: string; now?: Date; heartbeat?: () => void; signal?: AbortSignal }): Promise<PersonaRebuildResult> {
  const { userId } = input;
  const now = input.now ?? new Date();
  const maxTokens = personaTokenBudget(deps.config);
  const memories = await deps.memories.byTypes({ userId, types: [...PERSONA_TYPES], k: SOURCE_K, scope: 'global', now });
  const template = maxTokens > 0 ? buildTemplatePersona(memories, { now, maxTokens }) : undefined;
  if (!template) {
    const removed = await deps.personas.remove({ userId });
    return { action: removed ? 'removed' : 'empty', lines: 0, tokens: 0 };
  }
  const condenser = deps.config.recall.personaBuilder === 'llm' ? deps.personaCondenser : undefined;
  const memoryVersion = versionOf(template, condenser?.name ?? 'template');
  const stored = await deps.personas.get({ userId });
  if (stored?.memoryVersion === memoryVersion) return { action: 'unchanged', builder: stored.builder, lines: stored.lines.length, tokens: stored.tokens };

  let profile = template;
  let fallback: string | undefined;
  if (condenser) {
    const condensed = await condenseWithModel(condenser, template, maxTokens, input);
    if ('refused' in condensed) fallback = condensed.refused;
    else profile = condensed;
  }
  const action = await deps.personas.save({ userId, profile, memoryVersion, builtAt: now });
  return { action, builder: profile.builder, lines: profile.lines.length, tokens: profile.tokens, ...(fallback ? { fallback } : {}) };
}

/** The model step; never throws: a failed call or an unusable reply is the reason the template stays. */
async function condenseWithModel(condenser: PersonaCondenser, template: PersonaProfile, maxTokens: number, input: { heartbeat?: () => void; signal?: AbortSignal }): Promise<PersonaProfile | { refused: string }> {
  // A slow but healthy model call must not be taken for a dead worker.
  const timer = input.heartbeat ? setInterval(input.heartbeat, 5_000) : undefined;
  try {
    const reply = await condenser.condense({ system: CONDENSE_SYSTEM_PROMPT, prompt: condensePrompt(template, maxTokens), signal: input.signal });
    if ('unusable' in reply) return { refused: `unusable reply: ${reply.unusable}` };
    return condensedPersona(template, reply.lines, maxTokens);
  } catch (err) {
    return { refused: `model call failed: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    if (timer) clearInterval(timer);
  }
}
