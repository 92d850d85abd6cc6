import type { Memory, MemoryType } from '../types';

/**
 * What recall reads from PostgreSQL beside its searches, asked for together so one recall pays
 * one round trip for all of it (issue #22): the importance route, the type route, the user's
 * standing instructions, the memory BM25 route with its memories, the persona and the scene block.
 * A part left out of the input is not read (and comes back empty or undefined).
 */
export interface MemoryListsInput {
  userId: string;
  now: Date;
  important?: { k: number; minImportance: number; types?: MemoryType[] };
  byTypes?: { types: MemoryType[]; k: number };
  /** Global standing instructions, confirmed or pending (the caller drops pending ones). */
  instructions?: { k: number };
  /** Memory BM25 over every type (the segmented query, with repeats as in the text): the best k. */
  bm25?: { tokens: string[]; k: number };
  /** The persona as recall injects it (lines whose memories are gone left out). */
  persona?: boolean;
  /** The scene navigation block. */
  scenes?: boolean;
}

export interface MemoryLists {
  /** Ids, most important first (instructions aside). */
  important: string[];
  /** Active memories of the asked types, most important first, none pending. */
  byTypes: Memory[];
  instructions: Memory[];
  /** BM25 hits best first, whether or not their memory is still active and unexpired. */
  bm25: { id: string; score: number }[];
  /** Every active, unexpired memory this read returned (of any part): what recall need not load again. */
  memories: Memory[];
  /** The persona as recall injects it: the persona domain's RecallPersona, restated (a domain imports only the kernel and itself). */
  persona?: { language: 'zh' | 'en'; builder: 'template' | 'llm'; lines: { text: string; memoryIds: string[] }[]; builtAt: Date };
  scenes?: { language: 'zh' | 'en'; lines: string[] };
}

export interface MemoryListsSource {
  memoryLists(input: MemoryListsInput): Promise<MemoryLists>;
}
