/**
 * The one definition of the memory types: everything that differs by type lives in this table, and
 * every list or per-type table elsewhere (API and MCP schemas, the client package, the LLM
 * extraction prompt, ranking, extraction, lifecycle, the persona profile, the web page) is derived
 * from it. Adding a type means a row here, one migration widening the `memories.type` CHECK, and the
 * rules/prototypes that produce it; test/memory-type-list.test.ts walks every place that uses the list.
 * Pure data, so workflow code may import it.
 */

export interface MemoryTypeDefinition {
  /**
   * Recall priority (M.5 §5), the type factor of the final score: pain_point > goal > preference =
   * decision > fact = assistant_contribution > event; instructions on top. See src/core/recall/rank.ts.
   */
  priority: number;
  /** Importance a clause rule gives a memory of this type unless the wording says more (src/core/extraction/match.ts). */
  baseImportance: number;
  /**
   * Decay rule by type: the default lifetime in days, or null for none (the memory lives until decay
   * by importance or a correction retires it). Overridable per type by `LIFECYCLE_TTL_DAYS`.
   */
  expiryDays: number | null;
  /** Consecutive clauses of this type join one memory instead of starting a new one (src/core/extraction/segments.ts). */
  joinsConsecutiveClauses: boolean;
  /** The name the memory page shows for the type. */
  label: { zh: string; en: string };
  /** The heading of the type's lines in the injected user profile (src/core/persona/profile.ts). */
  profileLabel: { zh: string; en: string };
  /**
   * What the LLM extraction prompt says of the type beyond its name: a `note` clarifies the type
   * right under the list of types; a `rule` is a rule line of its own.
   */
  prompt?: { kind: 'note' | 'rule'; text: string };
}

/** In the order the types are listed everywhere (schemas, prompt, MCP descriptions). */
export const MEMORY_TYPE_DEFINITIONS = {
  fact: {
    priority: 0.75,
    baseImportance: 0.55,
    expiryDays: null,
    joinsConsecutiveClauses: false,
    label: { zh: '事实', en: 'fact' },
    profileLabel: { zh: '情况', en: 'About' },
  },
  preference: {
    priority: 0.85,
    baseImportance: 0.5,
    expiryDays: null,
    joinsConsecutiveClauses: false,
    label: { zh: '偏好', en: 'preference' },
    profileLabel: { zh: '偏好', en: 'Likes' },
  },
  goal: {
    priority: 0.95,
    baseImportance: 0.7,
    expiryDays: null,
    joinsConsecutiveClauses: true,
    label: { zh: '目标', en: 'goal' },
    profileLabel: { zh: '目标', en: 'Goal' },
  },
  pain_point: {
    priority: 1.0,
    baseImportance: 0.75,
    expiryDays: null,
    joinsConsecutiveClauses: true,
    label: { zh: '痛点', en: 'pain point' },
    profileLabel: { zh: '困扰', en: 'Struggles' },
  },
  event: {
    // Events ("今天要开会") go stale after a month (guide §7.1).
    priority: 0.6,
    baseImportance: 0.45,
    expiryDays: 30,
    joinsConsecutiveClauses: true,
    label: { zh: '事件', en: 'event' },
    profileLabel: { zh: '经历', en: 'Event' },
  },
  instruction: {
    // Top weight; global ones are injected separately (src/core/recall/format.ts) anyway.
    priority: 1.0,
    baseImportance: 0.7,
    expiryDays: null,
    joinsConsecutiveClauses: true,
    label: { zh: '指令', en: 'instruction' },
    profileLabel: { zh: '要求', en: 'Asks' },
    prompt: { kind: 'rule', text: 'how the user tells the assistant to behave, in the user\'s own words.' },
  },
  decision: {
    priority: 0.85,
    baseImportance: 0.65,
    expiryDays: null,
    joinsConsecutiveClauses: true,
    label: { zh: '决定', en: 'decision' },
    profileLabel: { zh: '决定', en: 'Decided' },
  },
  /** Something the assistant recommended, taught or committed to (never the user's own view). */
  assistant_contribution: {
    priority: 0.75,
    baseImportance: 0.5,
    expiryDays: null,
    joinsConsecutiveClauses: false,
    label: { zh: '助手建议', en: 'assistant' },
    profileLabel: { zh: '助手', en: 'Assistant' },
    prompt: {
      kind: 'note',
      text: 'a concrete recommendation, advice, explanation or commitment made BY THE ASSISTANT (a "role": "assistant" message) that the user asked for or took up (never the user\'s own preference). Chit-chat yields nothing.',
    },
  },
} as const satisfies Record<string, MemoryTypeDefinition>;

export type MemoryType = keyof typeof MEMORY_TYPE_DEFINITIONS;
export const MEMORY_TYPES = Object.keys(MEMORY_TYPE_DEFINITIONS) as [MemoryType, ...MemoryType[]];

const definitions: Readonly<Record<MemoryType, MemoryTypeDefinition>> = MEMORY_TYPE_DEFINITIONS;

/** One column of the definition as a table by type, e.g. `memoryTypeTable((d) => d.priority)`. */
export function memoryTypeTable<T>(pick: (definition: MemoryTypeDefinition, type: MemoryType) => T): Readonly<Record<MemoryType, T>> {
  return Object.fromEntries(MEMORY_TYPES.map((type) => [type, pick(definitions[type], type)])) as Record<MemoryType, T>;
}

/** The types whose definition says yes, in definition order. */
export function memoryTypesWhere(test: (definition: MemoryTypeDefinition) => boolean): MemoryType[] {
  return MEMORY_TYPES.filter((type) => test(definitions[type]));
}

/** The page's names of the types by language, as the page fetches them (it keeps no copy). */
export function memoryTypeLabels(): { zh: Record<MemoryType, string>; en: Record<MemoryType, string> } {
  return { zh: { ...memoryTypeTable((d) => d.label.zh) }, en: { ...memoryTypeTable((d) => d.label.en) } };
}

/**
 * The extraction prompt's lines about types: the list, each type's note under it, then each
 * type's own rule line.
 */
export function memoryTypePromptLines(): string {
  const notes = MEMORY_TYPES.flatMap((type) => {
    const p = definitions[type].prompt;
    return p?.kind === 'note' ? [`  ${type} = ${p.text}`] : [];
  });
  const rules = MEMORY_TYPES.flatMap((type) => {
    const p = definitions[type].prompt;
    return p?.kind === 'rule' ? [`- ${type} = ${p.text}`] : [];
  });
  return [`- type: ${MEMORY_TYPES.join(' | ')}.`, ...notes, ...rules].join('\n');
}
