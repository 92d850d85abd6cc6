import type { PersonaBuilder, PersonaLanguage, PersonaLine, PersonaProfile } from './profile';
import type { SceneEntry } from './scenes';

/** A profile as stored: what it was built from, when and how. */
export interface StoredPersona {
  userId: string;
  language: PersonaLanguage;
  builder: PersonaBuilder;
  lines: PersonaLine[];
  text: string;
  memoryIds: string[];
  memoryVersion: string;
  tokens: number;
  builtAt: Date;
}

/** The profile recall injects, without the lines whose memories are no longer active. */
export interface RecallPersona {
  language: PersonaLanguage;
  builder: PersonaBuilder;
  lines: PersonaLine[];
  builtAt: Date;
}

/** The `user_profiles` table: one persona per user. */
export interface PersonaStore {
  get(input: { userId: string }): Promise<StoredPersona | undefined>;
  /**
   * One keyed read for recall. A line is left out when a memory it states is no longer active and
   * unexpired at `now` (forgotten, superseded, archived, erased): until the rebuild, the profile
   * never says what the user took back.
   */
  forRecall(input: { userId: string; now: Date }): Promise<RecallPersona | undefined>;
  /**
   * Writes the profile unless one with the same text and memories is stored already
   * (`unchanged`), or a memory it states is no longer active (`stale`: the change that retired it
   * has signalled another rebuild).
   */
  save(input: { userId: string; profile: PersonaProfile; memoryVersion: string; builtAt: Date }): Promise<'written' | 'unchanged' | 'stale'>;
  /** Removes the profile (nothing durable left to say); false when there was none. */
  remove(input: { userId: string }): Promise<boolean>;
}

/** A chat model condensing a template profile (src/adapters/llm/persona-condenser.ts). */
export interface PersonaCondenser {
  readonly name: string;
  /** The model's lines with the numbers of the facts each states, or why its reply was unusable; a transport error throws. */
  condense(input: { system: string; prompt: string; signal?: AbortSignal }): Promise<{ lines: { text: string; facts: number[] }[] } | { unusable: string }>;
}

/** A user's scene index as stored (`user_scenes`): the grouping and the navigation block's lines. */
export interface StoredScenes {
  userId: string;
  language: PersonaLanguage;
  scenes: SceneEntry[];
  /** The block's lines, in scene order, built to the configured share (recall cuts further). */
  lines: string[];
  memoryVersion: string;
  tokens: number;
  builtAt: Date;
}

/** The `user_scenes` table: one scene index per user. */
export interface SceneStore {
  get(input: { userId: string }): Promise<StoredScenes | undefined>;
  /** Writes the index unless the same grouping is stored already (`unchanged`). */
  save(input: { userId: string; language: PersonaLanguage; scenes: SceneEntry[]; lines: string[]; memoryVersion: string; tokens: number; builtAt: Date }): Promise<'written' | 'unchanged'>;
  /** Removes the index (the user has no memories left to group); false when there was none. */
  remove(input: { userId: string }): Promise<boolean>;
}
