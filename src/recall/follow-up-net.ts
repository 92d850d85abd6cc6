import type { AppConfig } from '../config';
import { FOLLOW_UP_PROTOTYPES } from '../core/recall/follow-up-prototypes';
import { detectFollowUp, followUpByMeaning, followUpPrototypeIndex, netMayJudge, type FollowUpPrototypeIndex } from '../core/recall/follow-up';
import type { Embedder } from '../core/ports/memory';
import { segmenter as jiebaSegmenter } from '../shared/segmentation';
import { withDeadline } from './deadline';

/** The prototypes' vectors, per embedder (one per process): embedded once, a failed attempt is not kept. */
const indexes = new WeakMap<Embedder, Promise<FollowUpPrototypeIndex>>();
/** The same, once embedded: what a recall may use without waiting. */
const ready = new WeakMap<Embedder, FollowUpPrototypeIndex>();

/** Prototypes embedded this many at a time (the embedder port takes one query per call). */
const PARALLEL = 8;

async function embedPrototypes(embedder: Embedder): Promise<FollowUpPrototypeIndex> {
  const vectors: number[][] = [];
  for (let i = 0; i < FOLLOW_UP_PROTOTYPES.length; i += PARALLEL) {
    vectors.push(...(await Promise.all(FOLLOW_UP_PROTOTYPES.slice(i, i + PARALLEL).map((p) => embedder.embedQuery({ text: p.text })))));
  }
  return followUpPrototypeIndex(FOLLOW_UP_PROTOTYPES, vectors);
}

/** The embedded prototypes for `embedder`, embedding them on first use. */
export function followUpPrototypes(embedder: Embedder): Promise<FollowUpPrototypeIndex> {
  let index = indexes.get(embedder);
  if (!index) {
    index = embedPrototypes(embedder);
    index.then(
      (built) => ready.set(embedder, built),
      () => indexes.delete(embedder),
    );
    indexes.set(embedder, index);
  }
  return index;
}

/** The net's threshold is calibrated for multilingual e5 (query prefix); with another embedder only the word rules run. */
export function followUpNetEnabled(config: Pick<AppConfig, 'embedder'>): boolean {
  return config.embedder.provider === 'openai-compatible' && /e5/iu.test(config.embedder.model);
}

/**
 * Whether `query` is a vague follow-up: the word rules first (no vector needed), then the net on
 * the query's own vector, which `queryVector` shares with the other routes (the query is never
 * embedded twice). Never throws: an embedder that fails or runs past the deadline leaves the
 * word rules' answer (the ANN route reports the embedder's failure). Never waits for the
 * prototypes either: embedding them takes seconds, far past a recall's deadline, so until they
 * are ready (the processes warm them up at start) the word rules answer alone.
 */
export async function isVagueFollowUp(
  deps: { embedder: Embedder; config: Pick<AppConfig, 'embedder'> },
  query: string,
  queryVector: () => Promise<number[]>,
  deadline: number,
): Promise<boolean> {
  if (detectFollowUp(query, jiebaSegmenter).referBack) return true;
  if (!followUpNetEnabled(deps.config) || !netMayJudge(query)) return false;
  const index = ready.get(deps.embedder);
  if (!index) {
    void followUpPrototypes(deps.embedder).catch(() => undefined);
    return false;
  }
  try {
    const vector = await withDeadline(queryVector(), deadline);
    return followUpByMeaning(vector, index).referBack;
  } catch {
    return false;
  }
}
