// The forgetting curve is kernel (src/core/decay.ts): recall's ranking reads it as well as the
// lifecycle; this path keeps the lifecycle's other importers.
export * from '../decay';
