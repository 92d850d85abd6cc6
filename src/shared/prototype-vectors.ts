import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Prototype vectors (the follow-up net's, the scenes') kept in a file between starts, so a process
 * embeds two of them to check the model instead of all of them. A file is used only for the model id and the
 * exact texts it was written for, and only while the model still gives the same vectors for the
 * probes: a server that now serves other weights under the same name must not be judged with
 * vectors of another model.
 */
export interface PrototypeVectorsFile {
  model: string;
  textsHash: string;
  vectors: number[][];
}

/** The hash of the prototype texts in their order (an edit, an addition or a reorder changes it). */
export function prototypeTextsHash(texts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const text of texts) hash.update(`${text}\0`);
  return hash.digest('hex');
}

/** The cached vectors when the file was written for this model and these texts; why not otherwise. */
export function usableVectors(file: unknown, model: string, texts: readonly string[]): { vectors: number[][] } | { reason: string } {
  if (!file || typeof file !== 'object') return { reason: 'not a prototype vectors file' };
  const f = file as Partial<PrototypeVectorsFile>;
  if (f.model !== model) return { reason: `written for model "${String(f.model)}", not "${model}"` };
  if (f.textsHash !== prototypeTextsHash(texts)) return { reason: 'written for other prototype texts' };
  const vectors = f.vectors;
  if (!Array.isArray(vectors) || vectors.length !== texts.length) return { reason: 'vector count does not match the prototypes' };
  const dims = Array.isArray(vectors[0]) ? vectors[0].length : 0;
  const wellFormed = (v: unknown): v is number[] => Array.isArray(v) && v.length === dims && v.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (dims === 0 || !vectors.every(wellFormed)) return { reason: 'malformed vectors' };
  return { vectors };
}

/** Which prototypes are embedded again at start to check the cached vectors: the first and the middle one. */
export function probeIndexes(count: number): number[] {
  return [...new Set([0, Math.floor(count / 2)])].filter((i) => i < count);
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / (Math.sqrt(na * nb) || 1);
}

/**
 * How close a fresh vector must be to the cached one: the same model on the same server gives the
 * same vector up to float noise, while even a re-quantized copy of the same model lands lower.
 */
export const SAME_MODEL_COSINE = 0.999;

/** Whether the live model still gives the cached vectors for the probes. */
export function probesAgree(cached: readonly (readonly number[])[], probes: ReadonlyMap<number, readonly number[]>): boolean {
  for (const [i, fresh] of probes) {
    const old = cached[i];
    if (!old || old.length !== fresh.length || cosine(old, fresh) < SAME_MODEL_COSINE) return false;
  }
  return probes.size > 0;
}

export async function readVectorsFile(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    // Absent (first start) or unreadable: the prototypes are embedded and the file written again.
    return undefined;
  }
}

/** Written whole or not at all (a crash leaves the previous file or none, never half of one). */
export async function writeVectorsFile(path: string, file: PrototypeVectorsFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // Own temporary name: the API and the workers of one host may write at the same time.
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(file));
  await rename(tmp, path);
}

/** Where one set of prototype vectors is kept between starts, and for which model. */
export interface PrototypeCache {
  path: string;
  model: string;
  warn: (message: string) => void;
}

/**
 * The cached vectors when they are for this model and these texts and the model still agrees on
 * the probes; else all of them embedded (and written) again. `embed` is the caller's own way of
 * embedding (a query or a passage prefix changes e5's vectors), used for the probes too.
 */
export async function cachedPrototypeVectors(
  texts: readonly string[],
  embed: (texts: readonly string[]) => Promise<number[][]>,
  cache: PrototypeCache & { label: string },
): Promise<number[][]> {
  const usable = usableVectors(await readVectorsFile(cache.path), cache.model, texts);
  if ('vectors' in usable) {
    const indexes = probeIndexes(texts.length);
    const fresh = await embed(indexes.map((i) => texts[i]!));
    const probes = new Map(indexes.map((i, n) => [i, fresh[n]!] as const));
    if (probesAgree(usable.vectors, probes)) return usable.vectors;
    cache.warn(`${cache.label} vectors in ${cache.path} do not match what model "${cache.model}" answers now: embedding them again`);
  } else if (usable.reason !== 'not a prototype vectors file') {
    cache.warn(`${cache.label} vectors in ${cache.path} not used (${usable.reason}): embedding them again`);
  }
  const vectors = await embed(texts);
  await writeVectorsFile(cache.path, { model: cache.model, textsHash: prototypeTextsHash(texts), vectors }).catch((err: unknown) => cache.warn(`${cache.label} vectors not cached: ${String(err)}`));
  return vectors;
}
