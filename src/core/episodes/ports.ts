// Episodes' stored shapes and the episode vector index are ports (src/core/ports/recall.ts, the
// kernel); this path keeps its importers.
export type { Episode, EpisodeVectorIndex, EpisodeVectorItem, EpisodeVectorOwed, EpisodeWrite } from '../ports/recall';
