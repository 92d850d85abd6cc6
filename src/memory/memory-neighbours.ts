// Stage 1 of the write path (memory-writer.ts): the memories a candidate may relate to, and how.
import type { Neighbour } from '../core/decisions/decide';
import { reversesStance } from '../core/decisions/stance';
import { readWording, relateWording } from '../core/decisions/wording';
import { normalizeFact } from '../core/text/sentences';
import { restoreRefusal } from '../core/lifecycle/sweep';
import type { MemoryReader, MemorySearch, VectorIndex } from '../core/ports/memory';
import type { Memory, MemoryCandidate } from '../core/types';
import { segmenter, tokenizeForIndex } from '../shared/segmentation';

const NEIGHBOURS = 8;
/** Open pain points a resolution is weighed against (the most recent ones). */
const RESOLVABLE_PAIN_POINTS = 20;

function jaccard(a: string[], b: string[]): number {
  const A = new Set(a);
  const B = new Set(b);
  if (A.size === 0 || B.size === 0) return 0;
  let inter = 0;
  for (const x of A) if (B.has(x)) inter++;
  return inter / (A.size + B.size - inter);
}

/** Where neighbours are read from: the pool's reader outside the lock, the transaction's inside it. */
export interface NeighbourSource {
  memories: Pick<MemoryReader & MemorySearch, 'bm25' | 'findActiveByNormalized' | 'getActive' | 'findArchivedByNormalized' | 'byTypes'>;
  vectors: Pick<VectorIndex, 'query'>;
}

/**
 * The memories a candidate may relate to: nearest vectors, BM25 on its words and on its subject,
 * the active memory stating the same fact, or else an archived one (reinforcing it restores it).
 */
export async function loadNeighbours(source: NeighbourSource, input: { userId: string; candidate: MemoryCandidate; embedding: number[] | undefined }): Promise<Neighbour[]> {
  const { userId, candidate, embedding } = input;
  const normalized = normalizeFact(candidate.text);
  const subjectTokens = candidate.subject ? tokenizeForIndex(candidate.subject) : [];
  // The vector index answers in parallel with PostgreSQL; the statements share one transaction's
  // client, which runs them one at a time anyway (and pg 9 will refuse overlapping ones).
  const vectorSearch = embedding ? source.vectors.query({ userId, embedding, k: NEIGHBOURS }) : Promise.resolve([]);
  // Observed now so a vector failure during the SQL below is not an unhandled rejection; the
  // await further down still throws it.
  vectorSearch.catch(() => {});
  const lexicalHits = await source.memories.bm25({ userId, tokens: tokenizeForIndex(candidate.text), k: NEIGHBOURS });
  const subjectHits = subjectTokens.length > 0 ? await source.memories.bm25({ userId, tokens: subjectTokens, k: NEIGHBOURS }) : [];
  const sameFact = await source.memories.findActiveByNormalized({ userId, normalized });
  // A resolution ("修好了", "the printer works again") weighs every open problem, not only those its words reach.
  const painPoints = candidate.intent === 'resolve' ? await source.memories.byTypes({ userId, types: ['pain_point'], k: RESOLVABLE_PAIN_POINTS, now: candidate.saidAt }) : [];
  const vectorHits = await vectorSearch;
  const ids = [...new Set([...vectorHits.map((h) => h.id), ...lexicalHits.map((h) => h.id), ...subjectHits.map((h) => h.id), ...(sameFact ? [sameFact.id] : []), ...painPoints.map((m) => m.id)])];
  const active = await source.memories.getActive({ userId, ids });
  const archivedSame = sameFact ? undefined : await source.memories.findArchivedByNormalized({ userId, normalized });
  const memories = archivedSame && restoreRefusal(archivedSame, candidate.saidAt) === null ? [...active, archivedSame] : active;
  return toNeighbours(candidate, memories, new Map(vectorHits.map((h) => [h.id, h.similarity])));
}

/** How each memory relates to the candidate: similarity, word overlap, same fact, mentions the subject, what its words say of it. */
export function toNeighbours(candidate: MemoryCandidate, memories: Memory[], similarity: ReadonlyMap<string, number>): Neighbour[] {
  const candTokens = tokenizeForIndex(candidate.text);
  const subjectTokens = candidate.subject ? tokenizeForIndex(candidate.subject) : [];
  const normalizedCandidate = normalizeFact(candidate.text);
  const normalizedSubject = candidate.subject ? normalizeFact(candidate.subject) : '';
  const candWording = readWording(candidate.text, segmenter);
  return memories.map((m) => {
    const mTokens = tokenizeForIndex(m.text);
    const normalized = normalizeFact(m.text);
    const subjectHit =
      normalizedSubject.length > 0 &&
      (normalized.includes(normalizedSubject) || (subjectTokens.length > 0 && subjectTokens.every((t) => mTokens.includes(t))));
    return {
      memory: m,
      vectorSimilarity: similarity.get(m.id) ?? 0,
      lexicalOverlap: jaccard(candTokens, mTokens),
      sameNormalizedFact: normalized === normalizedCandidate,
      mentionsSubject: subjectHit,
      reversesStance: reversesStance({ text: candidate.text, tokens: candTokens }, { text: m.text, tokens: mTokens }),
      wording: relateWording(candWording, readWording(m.text, segmenter)),
    };
  });
}

