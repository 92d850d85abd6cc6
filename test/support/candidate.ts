import type { MemoryCandidate } from '../../src/core/types';

/** A plain, confident, global user statement as the extractor would hand it to the write path. */
export function candidate(text: string, over: Partial<MemoryCandidate> = {}): MemoryCandidate {
  return {
    text,
    type: 'fact',
    confidence: 0.9,
    importance: 0.5,
    keywords: [],
    entities: [],
    relations: [],
    scope: 'global',
    emotionTags: [],
    messageIds: ['m1'],
    role: 'user',
    saidAt: new Date('2026-06-02T09:00:00Z'),
    intent: 'assert',
    ...over,
  };
}
