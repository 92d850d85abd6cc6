import type { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import type { MemoryType } from '../../core/types';

/** Serialisation namespace of the recall route retrievers. */
export const MEMORY_ROUTE_NAMESPACE = ['jarvis_memory', 'retrievers', 'routes'];

/** What a memory route's Document carries besides the memory id (`Document.id`). */
export interface MemoryRouteMetadata extends Record<string, unknown> {
  route: string;
  /** Cosine similarity (ANN). */
  similarity?: number;
  /** BM25 score. */
  score?: number;
}

/**
 * The memory ids of a route's Documents, best first, for RRF. Any retriever can stand in for a
 * route as long as its Documents carry the memory id in `id` (or `metadata.id`).
 */
export function memoryIds(docs: readonly Document[]): string[] {
  return docs.flatMap((d) => {
    const id = d.id ?? d.metadata.id;
    return typeof id === 'string' ? [id] : [];
  });
}

/** Which memories a memory route reads: the user's, at most `k`, optionally of some types only. */
export interface MemoryRouteInput extends BaseRetrieverInput {
  userId: string;
  k: number;
  types?: MemoryType[];
}

/**
 * A memory route as a LangChain retriever: bound to one user (no method reaches another's
 * memories), answering Documents whose `id` is the memory id, best first.
 */
export abstract class MemoryRouteRetriever extends BaseRetriever {
  override lc_namespace = MEMORY_ROUTE_NAMESPACE;
  protected readonly userId: string;
  protected readonly k: number;
  protected readonly types?: MemoryType[];

  constructor(fields: MemoryRouteInput) {
    super(fields);
    this.userId = fields.userId;
    this.k = fields.k;
    this.types = fields.types;
  }

  abstract override _getRelevantDocuments(query: string): Promise<Document<MemoryRouteMetadata>[]>;
}
