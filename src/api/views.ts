import type { Memory } from '../core/types';

export function memoryToView(m: Memory) {
  return {
    id: m.id,
    text: m.text,
    type: m.type,
    status: m.status,
    scope: m.scope,
    confidence: m.confidence,
    importance: m.importance,
    importanceLevel: m.importanceLevel,
    frequencyCount: m.frequencyCount,
    decayScore: m.decayScore,
    emotionTags: m.emotionTags,
    keywords: m.keywords,
    source: m.source as Record<string, unknown>,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
    lastRecalledAt: m.lastRecalledAt?.toISOString() ?? null,
    expiresAt: m.expiresAt?.toISOString() ?? null,
    supersedes: m.supersedes,
    supersededBy: m.supersededBy,
    via: m.via,
    pending: m.pending,
  };
}
