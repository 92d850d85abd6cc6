import { describe, expect, it } from 'vitest';
import { memoryVectors } from '../src/persona/scenes';

// Scenes are regrouped on every memory change: only texts not embedded before go to the embedder.
describe('memoryVectors', () => {
  it('embeds each new text once and answers the rest from the cache, in the order asked', async () => {
    const asked: string[][] = [];
    const embedder = {
      embedQuery: async () => [0],
      embedDocuments: async ({ texts }: { texts: string[] }) => {
        asked.push(texts);
        return texts.map((t) => [t.length]);
      },
    };
    expect(await memoryVectors(embedder as never, ['a', 'bb', 'a'])).toEqual([[1], [2], [1]]);
    expect(await memoryVectors(embedder as never, ['bb', 'ccc', 'a'])).toEqual([[2], [3], [1]]);
    expect(await memoryVectors(embedder as never, ['a', 'bb'])).toEqual([[1], [2]]);
    expect(asked).toEqual([['a', 'bb'], ['ccc']]);
  });
});
