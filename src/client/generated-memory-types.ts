// Generated from src/core/memory-types.ts by `npm run gen:client-types`: do not edit.

/** The kinds of memory the service keeps. */
export type MemoryType = 'fact' | 'preference' | 'goal' | 'pain_point' | 'event' | 'instruction' | 'decision' | 'assistant_contribution';
