import { expect, it } from 'vitest';
import type { Memory } from '../src/core/types';
import { Hydration } from '../src/recall/hydration';

// Recall loads memories as each route answers (issue #22). A route whose own read fails must not
// take the memories other routes found down with it: what it did not bring is loaded at the end.
const memory = (id: string) => ({ id, userId: 'u', text: id }) as unknown as Memory;

function repository(failFirst: boolean) {
  const asked: string[][] = [];
  return {
    asked,
    async getActive({ ids }: { ids: string[] }): Promise<Memory[]> {
      asked.push(ids);
      if (failFirst && asked.length === 1) throw new Error('statement timeout');
      return ids.map(memory);
    },
  };
}

it("loads a failed route's ids again at the end instead of failing every memory", async () => {
  const repo = repository(false);
  const hydration = new Hydration(repo, 'u', new Date());
  hydration.track(Promise.reject(new Error('the short lists statement failed')));
  hydration.load(['ann-1', 'ann-2']);
  const found = await hydration.complete(['ann-1', 'list-1', 'ann-2']);
  expect(found.map((m) => m.id)).toEqual(['ann-1', 'list-1', 'ann-2']);
  expect(repo.asked).toEqual([['ann-1', 'ann-2'], ['list-1']]);
});

it('retries the ANN load once when it failed, and fails only if that last load fails too', async () => {
  const retried = repository(true);
  const hydration = new Hydration(retried, 'u', new Date());
  hydration.load(['ann-1']);
  expect((await hydration.complete(['ann-1'])).map((m) => m.id)).toEqual(['ann-1']);
  expect(retried.asked).toEqual([['ann-1'], ['ann-1']]);

  const down = { getActive: () => Promise.reject(new Error('database down')) };
  const failing = new Hydration(down, 'u', new Date());
  failing.load(['ann-1']);
  await expect(failing.complete(['ann-1'])).rejects.toThrow('database down');
});

it('never asks again for an id a route already read, found or not', async () => {
  const repo = repository(false);
  const hydration = new Hydration(repo, 'u', new Date());
  hydration.track(Promise.resolve({ ids: ['bm25-1', 'gone'], memories: [memory('bm25-1')] }));
  expect((await hydration.complete(['bm25-1', 'gone'])).map((m) => m.id)).toEqual(['bm25-1']);
  expect(repo.asked).toEqual([]);
});
