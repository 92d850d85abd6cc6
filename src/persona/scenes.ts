import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { AppConfig } from '../config';
import type { Embedder } from '../core/ports/memory';
import type { SceneStore, StoredScenes } from '../core/persona/ports';
import { personaLanguage, personaTokens } from '../core/persona/profile';
import { groupScenes, hasScene, isSceneId, prototypeTexts, sceneBlock, sceneLabel, scenePrototypes, SCENE_IDS, type SceneId } from '../core/persona/scenes';
import { MEMORY_TYPES, type Memory } from '../core/types';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { ServiceDeps } from '../shared/deps';
import { cachedPrototypeVectors, type PrototypeCache } from '../shared/prototype-vectors';

/** What rebuilding the scenes needs: the memory reader, the embedder, the scenes table. */
export type SceneDeps = Pick<ServiceDeps, 'memories' | 'config' | 'embedder' | 'vectors'> & { scenes: SceneStore };

export interface SceneRebuildResult {
  action: 'written' | 'unchanged' | 'removed' | 'empty';
  scenes: number;
  memories: number;
  tokens: number;
}

/** Active memories grouped per rebuild, most important first. */
export const SCENE_SOURCE_K = 300;
const SCENE_TYPES = MEMORY_TYPES.filter(hasScene);

/** Tokens the navigation block may take: its share of the configured budget. */
export function scenesTokenBudget(config: Pick<ServiceDeps['config'], 'recall'>): number {
  return Math.floor(config.recall.tokenBudget * config.recall.scenesShare);
}

// The prototypes never change for one embedder: embedded once per process, and kept in DATA_DIR
// between starts (checked against the model id and two probes) once a process has warmed them.
const prototypeCache = new WeakMap<Embedder, Promise<Map<SceneId, number[]>>>();

function prototypesOf(embedder: Embedder, cache?: PrototypeCache): Promise<Map<SceneId, number[]>> {
  let cached = prototypeCache.get(embedder);
  if (!cached) {
    const embed = (texts: readonly string[]) => embedder.embedDocuments({ texts: [...texts], lane: 'background' });
    const texts = prototypeTexts();
    cached = (cache ? cachedPrototypeVectors(texts, embed, { ...cache, label: 'scene prototype' }) : embed(texts)).then(scenePrototypes);
    cached.catch(() => prototypeCache.delete(embedder));
    prototypeCache.set(embedder, cached);
  }
  return cached;
}

/**
 * What a process warms up after it starts serving: the scene prototypes' vectors, from the file of
 * its last start in DATA_DIR when the model still agrees with it, so the first rebuild after a
 * restart does not put every prototype on the embedder.
 */
export async function warmScenePrototypes(embedder: Embedder, config: Pick<AppConfig, 'embedder' | 'dataDir'>, warn: (message: string) => void): Promise<void> {
  // Without a data directory (tests, embedded uses) there is nowhere to keep them between starts;
  // the hashing embedder computes them in microseconds and has no model id to check them against.
  if (!config.dataDir || config.embedder.provider !== 'openai-compatible') return;
  await prototypesOf(embedder, { path: join(config.dataDir, 'scene-prototypes.json'), model: config.embedder.model, warn });
}

/**
 * Regroups one user's active memories into scenes and stores the index with its navigation block
 * (cut to the share). Embedder failures throw (the activity retries): a keyword-only grouping
 * between two e5 ones would make the stable block flap. Idempotent: the same grouping writes nothing.
 */
export async function rebuildScenes(deps: SceneDeps, input: { userId: string; now?: Date }): Promise<SceneRebuildResult> {
  const { userId } = input;
  const now = input.now ?? new Date();
  const maxTokens = scenesTokenBudget(deps.config);
  const memories = maxTokens > 0 ? await deps.memories.byTypes({ userId, types: SCENE_TYPES, k: SCENE_SOURCE_K, now }) : [];
  if (memories.length === 0) {
    const removed = await deps.scenes.remove({ userId });
    return { action: removed ? 'removed' : 'empty', scenes: 0, memories: 0, tokens: 0 };
  }
  // Only the vectors the write path already stored in Chroma: a rebuild runs on every memory
  // change, and embedding here would put a user's whole store on the embedder each time. A
  // memory not synced yet is placed by its keywords until the outbox syncs it and the next
  // rebuild sees its vector.
  const [prototypes, stored] = await Promise.all([prototypesOf(deps.embedder), deps.vectors.vectorsOf({ userId, ids: memories.map((m) => m.id) })]);
  const index = groupScenes(memories, { language: personaLanguage(memories.map((m) => m.text)), vectors: stored, prototypes });
  const block = sceneBlock(index, maxTokens);
  const tokens = personaTokens(block.header, block.lines);
  const memoryVersion = createHash('sha256').update(JSON.stringify({ language: index.language, scenes: index.scenes, lines: block.lines })).digest('hex').slice(0, 32);
  const action = await deps.scenes.save({ userId, language: index.language, scenes: index.scenes, lines: block.lines, memoryVersion, tokens, builtAt: now });
  return { action, scenes: index.scenes.length, memories: memories.length, tokens };
}

/** One scene as the drill-down lists it. */
export interface SceneSummary {
  id: SceneId;
  label: string;
  memoryCount: number;
  hints: string[];
}

/** The user's scenes (empty before the first rebuild). */
export async function listScenes(deps: { scenes?: SceneStore }, input: { userId: string }): Promise<{ scenes: SceneSummary[]; language?: StoredScenes['language']; builtAt?: Date }> {
  const stored = deps.scenes ? await deps.scenes.get({ userId: input.userId }) : undefined;
  if (!stored) return { scenes: [] };
  return {
    language: stored.language,
    builtAt: stored.builtAt,
    scenes: stored.scenes.map((s) => ({ id: s.id, label: sceneLabel(s.id, stored.language), memoryCount: s.memoryIds.length, hints: s.hints })),
  };
}

/** The most memories one drill-down returns. */
export const SCENE_PAGE_MAX = 100;

/**
 * One scene's memories that are still active, most important first (the index order), at most
 * `limit`. An id that is not a scene, or a scene the user has none in, is `not_found` with code
 * `unknown_scene` in its details.
 */
export async function sceneMemories(
  deps: Pick<ServiceDeps, 'memories'> & { scenes?: SceneStore },
  input: { userId: string; sceneId: string; limit?: number; now?: Date },
): Promise<{ scene: SceneSummary; memories: Memory[]; total: number }> {
  const stored = isSceneId(input.sceneId) && deps.scenes ? await deps.scenes.get({ userId: input.userId }) : undefined;
  const entry = stored?.scenes.find((s) => s.id === input.sceneId);
  if (!stored || !entry) throw new MemoryServiceError(ErrorCode.notFound, 'unknown scene', { sceneId: input.sceneId.slice(0, 40), scenes: [...SCENE_IDS] });
  const limit = Math.min(SCENE_PAGE_MAX, Math.max(1, input.limit ?? 50));
  const ids = entry.memoryIds.slice(0, SCENE_PAGE_MAX * 2);
  const active = await deps.memories.getActive({ userId: input.userId, ids, now: input.now });
  const byId = new Map(active.map((m) => [m.id, m]));
  const ordered = ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  return { scene: { id: entry.id, label: sceneLabel(entry.id, stored.language), memoryCount: entry.memoryIds.length, hints: entry.hints }, memories: ordered.slice(0, limit), total: ordered.length };
}
