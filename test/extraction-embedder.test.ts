import { expect, it } from 'vitest';
import type { Embedder } from '../src/core/ports/memory';
import { batchingEmbedder } from '../src/conversation/extraction-embedder';

// An embedder that throws before it returns a promise (a bad configuration, a client bug) must fail
// the decisions of its batch like a rejected request, not throw from a timer callback and take the
// worker process down with an uncaught exception.
it('fails the batch when the inner embedder throws synchronously, and serves the next batch', async () => {
  let calls = 0;
  const inner = {
    embedQuery: () => Promise.resolve([0]),
    embedDocuments: ({ texts }: { texts: string[] }) => {
      calls++;
      if (calls === 1) throw new Error('thrown before any promise');
      return Promise.resolve(texts.map((t) => [t.length]));
    },
  } as unknown as Embedder;
  const embedder = batchingEmbedder(inner);
  await expect(embedder.embedDocuments({ texts: ['a'] })).rejects.toThrow('thrown before any promise');
  await expect(embedder.embedDocuments({ texts: ['abc'] })).resolves.toEqual([[3]]);
});
