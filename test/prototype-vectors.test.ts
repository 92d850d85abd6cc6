import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FOLLOW_UP_PROTOTYPES } from '../src/core/recall/follow-up-prototypes';
import type { Embedder } from '../src/core/ports/memory';
import { followUpPrototypes } from '../src/recall/follow-up-net';
import { prototypeTexts } from '../src/core/persona/scenes';
import { warmScenePrototypes } from '../src/persona/scenes';
import { probeIndexes, probesAgree, prototypeTextsHash, usableVectors } from '../src/shared/prototype-vectors';

// The follow-up prototypes' vectors are kept between starts, but never used for another model,
// other texts, or a model that now answers differently.

/** A deterministic stand-in for the embedding model: `seed` plays the weights. */
function fakeModel(seed: number): Embedder & { calls: string[] } {
  const calls: string[] = [];
  const vector = (text: string) => Array.from({ length: 8 }, (_, i) => Math.sin(seed * 31 + i * 7 + [...text].reduce((s, c) => s + c.charCodeAt(0), 0)));
  return {
    calls,
    async embedQuery({ text }: { text: string }) {
      calls.push(text);
      return vector(text);
    },
    async embedDocuments({ texts }: { texts: string[] }) {
      calls.push(...texts);
      return texts.map(vector);
    },
  } as unknown as Embedder & { calls: string[] };
}

const texts = FOLLOW_UP_PROTOTYPES.map((p) => p.text);
let dir: string;
let path: string;
let warnings: string[];
const cache = (model = 'multilingual-e5-small-q4') => ({ path, model, warn: (m: string) => warnings.push(m) });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'proto-cache-'));
  path = join(dir, 'follow-up-prototypes.json');
  warnings = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('follow-up prototype vectors kept between starts', () => {
  it('are embedded and written on the first start, then checked with two probes on the next', async () => {
    const first = fakeModel(1);
    const built = await followUpPrototypes(first, cache());
    expect(first.calls).toHaveLength(texts.length);
    const file = JSON.parse(await readFile(path, 'utf8')) as { model: string; textsHash: string; vectors: number[][] };
    expect(file.model).toBe('multilingual-e5-small-q4');
    expect(file.textsHash).toBe(prototypeTextsHash(texts));

    const restarted = fakeModel(1);
    const again = await followUpPrototypes(restarted, cache());
    expect(restarted.calls).toEqual(probeIndexes(texts.length).map((i) => texts[i]));
    expect(again.classes).toEqual(built.classes);
    expect(warnings).toEqual([]);
  });

  it('are embedded again, with a warning, when the model now answers differently under the same name', async () => {
    await followUpPrototypes(fakeModel(1), cache());
    const other = fakeModel(2);
    const index = await followUpPrototypes(other, cache());
    expect(other.calls).toHaveLength(probeIndexes(texts.length).length + texts.length);
    expect(warnings.join('\n')).toMatch(/do not match/);
    const fresh = await followUpPrototypes(fakeModel(2), { ...cache(), path: join(dir, 'fresh.json') });
    expect(index.classes).toEqual(fresh.classes);
    // The file now holds the new model's vectors: the next start takes them after its probes.
    const next = fakeModel(2);
    await followUpPrototypes(next, cache());
    expect(next.calls).toHaveLength(probeIndexes(texts.length).length);
  });

  it('are never taken from a file of another model id, without even probing', async () => {
    await followUpPrototypes(fakeModel(1), cache('some-other-model'));
    const model = fakeModel(1);
    await followUpPrototypes(model, cache());
    expect(model.calls).toHaveLength(texts.length);
    expect(warnings.join('\n')).toMatch(/some-other-model/);
  });

  it('are embedded again when the file is truncated or not JSON', async () => {
    await writeFile(path, '{"model":"multilingual-e5-small-q4","textsHash":');
    const model = fakeModel(1);
    await followUpPrototypes(model, cache());
    expect(model.calls).toHaveLength(texts.length);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ model: 'multilingual-e5-small-q4' });
  });
});

describe('prototype vectors file check', () => {
  const vectors = texts.map((_, i) => [1, i, 0.5]);
  const file = { model: 'm', textsHash: prototypeTextsHash(texts), vectors };

  it('takes a file written for this model and these texts', () => {
    expect(usableVectors(file, 'm', texts)).toEqual({ vectors });
  });

  it('refuses other texts: an edit, an addition, a reorder', () => {
    expect(usableVectors(file, 'm', [...texts.slice(0, -1), `${texts.at(-1)}!`])).toHaveProperty('reason');
    expect(usableVectors(file, 'm', [...texts, 'one more'])).toHaveProperty('reason');
    expect(usableVectors(file, 'm', [texts[1]!, texts[0]!, ...texts.slice(2)])).toHaveProperty('reason');
  });

  it('refuses another model id, a wrong count and malformed vectors', () => {
    expect(usableVectors(file, 'other', texts)).toEqual({ reason: 'written for model "m", not "other"' });
    expect(usableVectors({ ...file, vectors: vectors.slice(1) }, 'm', texts)).toHaveProperty('reason');
    expect(usableVectors({ ...file, vectors: vectors.map((v, i) => (i === 3 ? [1, Number.NaN, 0] : v)) }, 'm', texts)).toHaveProperty('reason');
    expect(usableVectors({ ...file, vectors: vectors.map((v, i) => (i === 3 ? [1, 2] : v)) }, 'm', texts)).toHaveProperty('reason');
    expect(usableVectors(null, 'm', texts)).toHaveProperty('reason');
  });

  it('agrees only when every probe is the cached vector up to float noise', () => {
    const cached = [[1, 0, 0], [0, 1, 0]];
    expect(probesAgree(cached, new Map([[0, [1, 1e-6, 0]], [1, [0, 1, 0]]]))).toBe(true);
    expect(probesAgree(cached, new Map([[0, [1, 0.1, 0]], [1, [0, 1, 0]]]))).toBe(false);
    expect(probesAgree(cached, new Map([[0, [1, 0]]]))).toBe(false);
    expect(probesAgree(cached, new Map())).toBe(false);
  });
});

describe('scene prototype vectors kept between starts', () => {
  const sceneTexts = prototypeTexts();
  const config = (model = 'multilingual-e5-small-q4') => ({ dataDir: dir, embedder: { provider: 'openai-compatible', model } }) as Parameters<typeof warmScenePrototypes>[1];

  it('are embedded on the first start, then checked with two probes on the next', async () => {
    const first = fakeModel(1);
    await warmScenePrototypes(first, config(), (m) => warnings.push(m));
    expect(first.calls).toHaveLength(sceneTexts.length);
    const restarted = fakeModel(1);
    await warmScenePrototypes(restarted, config(), (m) => warnings.push(m));
    expect(restarted.calls).toEqual(probeIndexes(sceneTexts.length).map((i) => sceneTexts[i]));
    expect(warnings).toEqual([]);
  });

  it('are embedded again for another model id, and not kept at all without a data directory', async () => {
    await warmScenePrototypes(fakeModel(1), config('other-model'), (m) => warnings.push(m));
    const model = fakeModel(1);
    await warmScenePrototypes(model, config(), (m) => warnings.push(m));
    expect(model.calls).toHaveLength(sceneTexts.length);
    expect(warnings.join('\n')).toMatch(/other-model/);
    const nowhere = fakeModel(1);
    await warmScenePrototypes(nowhere, { ...config(), dataDir: '' }, () => undefined);
    expect(nowhere.calls).toHaveLength(0);
  });
});
