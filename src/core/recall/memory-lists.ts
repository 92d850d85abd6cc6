import type { MemoryRepository } from '../ports/memory';
import { MEMORY_TYPES } from '../memory-types';
import type { Memory, MemoryType } from '../types';

/**
 * What recall reads from PostgreSQL beside its searches, asked for together so one recall pays
 * one round trip for all of it (issue #22): the importance, type and recent routes, the user's
 * standing instructions, the persona and the scene block.
 * A part left out of the input is not read (and comes back empty or undefined).
 */
export interface MemoryListsInput {
  userId: string;
  now: Date;
  important?: { k: number; minImportance: number; types?: MemoryType[] };
  byTypes?: { types: MemoryType[]; k: number };
  /** The recent route: active memories last touched first (of these types, when given). */
  recent?: { k: number; types?: MemoryType[] };
  /** Global standing instructions, confirmed or pending (the caller drops pending ones). */
  instructions?: { k: number };
  /** The persona as recall injects it (lines whose memories are gone left out). */
  persona?: boolean;
  /** The scene navigation block. */
  scenes?: boolean;
  /** Whether the user has any message, episode and entity: routes over none of them cannot find anything. */
  history?: boolean;
}

/** Which of the user's stores hold anything at all (messages, episodes, graph entities). */
export interface UserHistory {
  messages: boolean;
  episodes: boolean;
  entities: boolean;
}

export interface MemoryLists {
  /** Ids, most important first (instructions aside). */
  important: string[];
  /** Active memories of the asked types, most important first, none pending. */
  byTypes: Memory[];
  /** Ids, last touched first (expired ones included, as the recent route always had them). */
  recent: string[];
  instructions: Memory[];
  /** Every active, unexpired memory this read returned (of any part): what recall need not load again. */
  memories: Memory[];
  /** The persona as recall injects it: the persona domain's RecallPersona, restated (a domain imports only the kernel and itself). */
  persona?: { language: 'zh' | 'en'; builder: 'template' | 'llm'; lines: { text: string; memoryIds: string[] }[]; builtAt: Date };
  scenes?: { language: 'zh' | 'en'; lines: string[] };
  /** Set when asked for. */
  history?: UserHistory;
}

/** Memory BM25 hits best first (whether or not their memory is still active), with the rows of those that are. */
export interface Bm25WithMemories {
  hits: { id: string; score: number }[];
  memories: Memory[];
}

export interface MemoryListsSource {
  memoryLists(input: MemoryListsInput): Promise<MemoryLists>;
  /**
   * Memory BM25 over every type (the segmented query, repeats as in the text), the best k with
   * their memories in the same statement, so recall does not load them again. Its own statement,
   * beside the lists': one statement holding both planned in 6 ms instead of 1–2 ms and ran them in series.
   */
  bm25WithMemories(input: { userId: string; now: Date; tokens: string[]; k: number }): Promise<Bm25WithMemories>;
}

/** A recall's reads of one user: the short lists, memory BM25 and the hydration of search hits. */
export type RecallReads = MemoryListsSource & Pick<MemoryRepository, 'getActive'>;

/** Working sets held by the process (src/recall/working-set-cache.ts): a recall's reads from memory, brought up to date first, or through `fallback`. */
export interface WorkingSets {
  forRequest(userId: string, now: Date, fallback: { lists: MemoryListsSource; memories: Pick<MemoryRepository, 'getActive'> }): RecallReads;
  /** Whether `userId`'s memories are held now: a recall of them then sends one statement, off its critical path. */
  isHeld(userId: string): boolean;
}

/** The important list's types: those asked for, else every type; never instructions, which have their own list. */
export function importantTypes(types: readonly MemoryType[] | undefined): MemoryType[] {
  return (types && types.length > 0 ? types : MEMORY_TYPES).filter((t) => t !== 'instruction');
}
