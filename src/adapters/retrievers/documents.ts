import type { Document } from '@langchain/core/documents';

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
