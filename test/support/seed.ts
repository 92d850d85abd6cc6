import { normalizeFact } from '../../src/core/extraction/offline-extractor';
import { uuidFromKey } from '../../src/shared/ids';
import { tokenizeForIndex } from '../../src/adapters/text/jieba';
import type { NewMemory } from '../../src/core/ports/memory';
import type { MemoryStatus, MemoryType } from '../../src/core/types';
import type { ServiceDeps } from '../../src/shared/deps';
import { syncVectors } from '../../src/memory/vector-sync';

export interface SeedMemory {
  text: string;
  type?: MemoryType;
  status?: MemoryStatus;
  importance?: number;
  scope?: 'global' | 'task';
  at?: Date;
  expiresAt?: Date | null;
  /** Awaiting the user's confirmation (migration 1796670000000). */
  pending?: boolean;
}

/** A memory as the write path hands it to the repository: an active, medium, global fact said at `at` unless `over` says otherwise. */
export function newMemory(input: { id: string; userId: string; text: string; at?: Date } & Partial<NewMemory>): NewMemory {
  const { id, userId, text, at = new Date('2026-06-01T00:00:00Z'), ...over } = input;
  return {
    id,
    userId,
    text,
    normalizedText: normalizeFact(text),
    type: 'fact',
    status: 'active',
    scope: 'global',
    confidence: 0.9,
    importance: 0.5,
    importanceLevel: 'medium',
    importanceComponents: {},
    frequencyCount: 1,
    decayScore: 1,
    emotionTags: [],
    associatedTopics: [],
    keywords: [],
    source: { via: 'api', role: 'user' },
    metadata: {},
    createdAt: at,
    updatedAt: at,
    lastRecalledAt: null,
    lastAccessedAt: at,
    expiresAt: null,
    supersedes: null,
    supersededBy: null,
    via: 'api',
    pending: false,
    tokens: tokenizeForIndex(text),
    ...over,
  };
}

/**
 * Writes memories straight through the repository (the same insert the write path uses: row,
 * postings, outbox) and syncs their vectors to Chroma — fast set-up for recall tests that are
 * about reading, not about extraction.
 */
export async function seedMemories(deps: Pick<ServiceDeps, 'users' | 'unitOfWork' | 'vectors' | 'vectorOutbox' | 'embedder'>, userId: string, items: SeedMemory[]): Promise<string[]> {
  const ids: string[] = [];
  await deps.users.ensure({ userKey: userId, tenantId: 'tenant-a', externalId: `seed:${userId}` });
  await deps.unitOfWork.forUser({
    userId,
    work: async (tx) => {
      for (const [i, item] of items.entries()) {
        const at = item.at ?? new Date('2026-06-01T00:00:00Z');
        const importance = item.importance ?? 0.5;
        const m = newMemory({
          id: uuidFromKey(`seed:${userId}:${i}:${item.text}`),
          userId,
          text: item.text,
          at,
          type: item.type ?? 'fact',
          status: item.status ?? 'active',
          scope: item.scope ?? 'global',
          importance,
          importanceLevel: importance >= 0.85 ? 'critical' : importance >= 0.7 ? 'high' : importance >= 0.4 ? 'medium' : 'low',
          expiresAt: item.expiresAt ?? null,
          pending: item.pending ?? false,
        });
        await tx.memories.insert(m);
        ids.push(m.id);
      }
    },
  });
  await syncVectors(deps, { userId, limit: 10_000 });
  return ids;
}
