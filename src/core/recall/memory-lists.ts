import type { Memory, MemoryType } from '../types';

/**
 * The short lists recall reads beside its searches, asked for together so one recall pays one
 * round trip for them: the importance route, the type route and the user's standing instructions.
 * A list left out of the input is not read (and comes back empty).
 */
export interface MemoryListsInput {
  userId: string;
  now: Date;
  important?: { k: number; minImportance: number; types?: MemoryType[] };
  byTypes?: { types: MemoryType[]; k: number };
  /** Global standing instructions, confirmed or pending (the caller drops pending ones). */
  instructions?: { k: number };
}

export interface MemoryLists {
  /** Ids, most important first (instructions aside). */
  important: string[];
  /** Active memories of the asked types, most important first, none pending. */
  byTypes: Memory[];
  instructions: Memory[];
}

export interface MemoryListsSource {
  memoryLists(input: MemoryListsInput): Promise<MemoryLists>;
}
