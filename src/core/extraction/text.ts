// Sentence splitting, language and fact normalization are kernel text helpers (src/core/text/sentences.ts),
// shared with episodes and recall; the extraction rules keep this path.
export * from '../text/sentences';
