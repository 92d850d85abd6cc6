import { join } from 'node:path';
import type { AppConfig } from '../config';
import { FOLLOW_UP_PROTOTYPES } from '../core/recall/follow-up-prototypes';
import { detectFollowUp, followUpPrototypeIndex, isReferBackByMeaning, netMayJudge, type FollowUpPrototypeIndex } from '../core/recall/follow-up';
import type { Embedder } from '../core/ports/memory';
import { segmenter as jiebaSegmenter } from '../shared/segmentation';
import { withDeadline } from './deadline';
import { cachedPrototypeVectors, type PrototypeCache } from '../shared/prototype-vectors';

/** The prototypes' vectors, per embedder (one per process): embedded once, a failed attempt is not kept. */
const indexes = new WeakMap<Embedder, Promise<FollowUpPrototypeIndex>>();
/** The same, once embedded: what a recall may use without waiting. */
const ready = new WeakMap<Embedder, FollowUpPrototypeIndex>();

/** Prototypes embedded this many at a time (the embedder port takes one query per call). */
const PARALLEL = 8;

async function embedAll(embedder: Embedder, texts: readonly string[]): Promise<number[][]> {
  const vectors: number[][] = [];
  for (let i = 0; i < texts.length; i += PARALLEL) {
    vectors.push(...(await Promise.all(texts.slice(i, i + PARALLEL).map((text) => embedder.embedQuery({ text })))));
  }
  return vectors;
}

async function embedPrototypes(embedder: Embedder, cache: PrototypeCache | undefined): Promise<FollowUpPrototypeIndex> {
  const texts = FOLLOW_UP_PROTOTYPES.map((p) => p.text);
  const vectors = cache ? await cachedPrototypeVectors(texts, (some) => embedAll(embedder, some), { ...cache, label: 'follow-up prototype' }) : await embedAll(embedder, texts);
  return followUpPrototypeIndex(FOLLOW_UP_PROTOTYPES, vectors);
}

/** The embedded prototypes for `embedder`, embedding them on first use (or checking the vectors `cache` kept from an earlier start). */
export function followUpPrototypes(embedder: Embedder, cache?: PrototypeCache): Promise<FollowUpPrototypeIndex> {
  let index = indexes.get(embedder);
  if (!index) {
    index = embedPrototypes(embedder, cache);
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
 * What a process warms up after it starts serving: the prototypes' vectors, from the file of its
 * last start in DATA_DIR when the model still agrees with it (two embeddings instead of all).
 */
export async function warmFollowUpPrototypes(embedder: Embedder, config: Pick<AppConfig, 'embedder' | 'dataDir'>, warn: (message: string) => void): Promise<void> {
  if (config.embedder.provider !== 'openai-compatible' || !followUpNetEnabled(config)) return;
  await followUpPrototypes(embedder, { path: join(config.dataDir, 'follow-up-prototypes.json'), model: config.embedder.model, warn });
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
    return isReferBackByMeaning(vector, index);
  } catch {
    return false;
  }
}
