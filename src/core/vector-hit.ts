/**
 * A nearest neighbour from a vector index; `similarity` is cosine similarity in [-1, 1]. Its own
 * module because every capability's vector port returns it (src/core/ports.ts and the episodes'
 * ports), and the episodes' ports importing it from src/core/ports.ts closed an import circle.
 */
export interface VectorHit {
  id: string;
  similarity: number;
}
