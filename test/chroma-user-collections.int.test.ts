import { randomBytes } from 'node:crypto';
import { ChromaClient } from 'chromadb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ChromaEpisodeIndex, episodeCollectionName } from '../src/adapters/chroma/chroma-episode-index';
import { ChromaVectorIndex } from '../src/adapters/chroma/chroma-vector-index';
import { userCollectionName } from '../src/adapters/chroma/user-collections';
import { mulberry32 } from './support/prng';

// One Chroma collection per user, on the real Chroma server: isolation by construction, the
// owner check on read, recovery from a collection deleted behind a cached handle, and the move
// of a pre-0.2 shared collection into per-user ones.

const chromaUrl = () => inject('stack').chromaUrl;
const client = () => {
  const u = new URL(chromaUrl());
  return new ChromaClient({ host: u.hostname, port: Number(u.port) });
};
const rand = mulberry32(11);
const vector = () => {
  const v = Array.from({ length: 384 }, () => rand() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const prefix = `cu_${randomBytes(3).toString('hex')}`;
const created: string[] = [];

afterAll(async () => {
  const chroma = client();
  for (const name of created) await chroma.deleteCollection({ name }).catch(() => {});
});

describe('per-user Chroma collections', () => {
  it('keeps each user in a collection of their own and finds nothing for a user without vectors', async () => {
    const index = await ChromaVectorIndex.create({ url: chromaUrl(), collection: `${prefix}_a` });
    const [alice, bob] = ['alice', 'bob'];
    created.push(userCollectionName(`${prefix}_a`, alice), userCollectionName(`${prefix}_a`, bob));
    const shared = vector();
    await index.upsert({ userId: alice, items: [{ id: '00000000-0000-4000-8000-00000000000a', embedding: shared, type: 'fact', createdAt: new Date().toISOString() }] });
    await index.upsert({ userId: bob, items: [{ id: '00000000-0000-4000-8000-00000000000b', embedding: shared, type: 'preference', createdAt: new Date().toISOString() }] });

    expect((await index.query({ userId: alice, embedding: shared, k: 10 })).map((h) => h.id)).toEqual(['00000000-0000-4000-8000-00000000000a']);
    expect((await index.query({ userId: bob, embedding: shared, k: 10 })).map((h) => h.id)).toEqual(['00000000-0000-4000-8000-00000000000b']);
    expect(await index.query({ userId: 'carol', embedding: shared, k: 10 })).toEqual([]);
    // A read never creates a collection.
    await expect(client().getCollection({ name: userCollectionName(`${prefix}_a`, 'carol'), embeddingFunction: null as never })).rejects.toThrow();
    // The type filter works inside the user's collection.
    expect(await index.query({ userId: alice, embedding: shared, k: 10, types: ['preference'] })).toEqual([]);

    // Deletes name the user; removeMany spreads over each user's collection.
    await index.removeMany({ items: [{ userId: alice, id: '00000000-0000-4000-8000-00000000000a' }, { userId: bob, id: '00000000-0000-4000-8000-00000000000b' }] });
    expect(await index.query({ userId: alice, embedding: shared, k: 10 })).toEqual([]);
    expect(await index.query({ userId: bob, embedding: shared, k: 10 })).toEqual([]);
  });

  it('drops a hit whose record belongs to someone else, even inside the caller’s collection', async () => {
    const index = await ChromaVectorIndex.create({ url: chromaUrl(), collection: `${prefix}_b` });
    const name = userCollectionName(`${prefix}_b`, 'dave');
    created.push(name);
    const v = vector();
    await index.upsert({ userId: 'dave', items: [{ id: '00000000-0000-4000-8000-0000000000d1', embedding: v, type: 'fact', createdAt: new Date().toISOString() }] });
    // Simulates a hash collision or a stray write: a record owned by erin in dave's collection.
    const collection = await client().getCollection({ name, embeddingFunction: null as never });
    await collection.add({ ids: ['00000000-0000-4000-8000-0000000000e1'], embeddings: [v], metadatas: [{ user_id: 'erin', type: 'fact' }] });
    expect((await index.query({ userId: 'dave', embedding: v, k: 10 })).map((h) => h.id)).toEqual(['00000000-0000-4000-8000-0000000000d1']);
  });

  it('survives many concurrent first writes for a new user (one collection, every vector kept)', async () => {
    const index = await ChromaVectorIndex.create({ url: chromaUrl(), collection: `${prefix}_d` });
    const name = userCollectionName(`${prefix}_d`, 'ivy');
    created.push(name);
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        index.upsert({ userId: 'ivy', items: [{ id: `00000000-0000-4000-8000-0000000001${String(i).padStart(2, '0')}`, embedding: vector(), type: 'fact', createdAt: new Date().toISOString() }] }),
      ),
    );
    expect(await (await client().getCollection({ name, embeddingFunction: null as never })).count()).toBe(12);
  });

  it('recovers when a cached collection was deleted by another process', async () => {
    const index = await ChromaVectorIndex.create({ url: chromaUrl(), collection: `${prefix}_c` });
    const name = userCollectionName(`${prefix}_c`, 'frank');
    created.push(name);
    const v = vector();
    await index.upsert({ userId: 'frank', items: [{ id: '00000000-0000-4000-8000-0000000000f1', embedding: v, type: 'fact', createdAt: new Date().toISOString() }] });
    expect(await index.query({ userId: 'frank', embedding: v, k: 5 })).toHaveLength(1);
    await client().deleteCollection({ name });
    expect(await index.query({ userId: 'frank', embedding: v, k: 5 })).toEqual([]);
    await index.upsert({ userId: 'frank', items: [{ id: '00000000-0000-4000-8000-0000000000f2', embedding: v, type: 'fact', createdAt: new Date().toISOString() }] });
    expect((await index.query({ userId: 'frank', embedding: v, k: 5 })).map((h) => h.id)).toEqual(['00000000-0000-4000-8000-0000000000f2']);
  });

  it('moves a shared collection of the old layout into per-user collections at start, once', async () => {
    const base = `${prefix}_legacy`;
    const chroma = client();
    const legacy = await chroma.createCollection({ name: base, embeddingFunction: null, configuration: { hnsw: { space: 'cosine' } } });
    const legacyEpisodes = await chroma.createCollection({ name: episodeCollectionName(base), embeddingFunction: null, configuration: { hnsw: { space: 'cosine' } } });
    created.push(base, episodeCollectionName(base));
    const vectors = Array.from({ length: 2500 }, () => vector());
    const owner = (i: number) => (i % 5 === 0 ? 'gina' : 'hank');
    for (let start = 0; start < vectors.length; start += 500) {
      const ids = vectors.slice(start, start + 500).map((_, j) => `00000000-0000-4000-8000-${String(start + j).padStart(12, '0')}`);
      await legacy.add({ ids, embeddings: vectors.slice(start, start + 500), metadatas: ids.map((_, j) => ({ user_id: owner(start + j), type: 'fact', created_at: '2026-01-01T00:00:00Z' })) });
    }
    await legacyEpisodes.add({ ids: ['00000000-0000-4000-9000-000000000001'], embeddings: [vectors[0]!], metadatas: [{ user_id: 'gina', conversation_id: 'c1', day: '2026-01-01' }] });
    for (const u of ['gina', 'hank']) created.push(userCollectionName(base, u), userCollectionName(episodeCollectionName(base), u));

    const index = await ChromaVectorIndex.create({ url: chromaUrl(), collection: base });
    const episodes = await ChromaEpisodeIndex.create({ url: chromaUrl(), memoryCollection: base });
    await expect(chroma.getCollection({ name: base, embeddingFunction: null as never })).rejects.toThrow();
    await expect(chroma.getCollection({ name: episodeCollectionName(base), embeddingFunction: null as never })).rejects.toThrow();
    const gina = await chroma.getCollection({ name: userCollectionName(base, 'gina'), embeddingFunction: null as never });
    const hank = await chroma.getCollection({ name: userCollectionName(base, 'hank'), embeddingFunction: null as never });
    expect(await gina.count()).toBe(500);
    expect(await hank.count()).toBe(2000);
    expect((await index.query({ userId: 'gina', embedding: vectors[5]!, k: 1 }))[0]?.id).toBe('00000000-0000-4000-8000-000000000005');
    expect((await index.query({ userId: 'hank', embedding: vectors[5]!, k: 3 })).map((h) => h.id)).not.toContain('00000000-0000-4000-8000-000000000005');
    expect((await episodes.query({ userId: 'gina', embedding: vectors[0]!, k: 1 })).map((h) => h.id)).toEqual(['00000000-0000-4000-9000-000000000001']);
    // A second start finds nothing left to move.
    await ChromaVectorIndex.create({ url: chromaUrl(), collection: base });
    expect(await gina.count()).toBe(500);
  });
});
