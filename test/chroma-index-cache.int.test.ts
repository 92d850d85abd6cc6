import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChromaVectorIndex } from '../src/adapters/chroma/chroma-vector-index';
import { chromaClient } from '../src/adapters/chroma/user-collections';
import { findExecutable } from '../src/stack/binaries';
import { indexCacheFor, startLocalChroma, type LocalChroma } from '../src/stack/local-chroma';
import { freePort } from '../src/stack/managed-process';
import { mulberry32 } from './support/prng';

// The bounded HNSW index cache on a real Chroma server, started the way the stack starts it but
// with its smallest capacity: Chroma's cache has 64 shards holding at least one index each, so
// asking for 2 keeps at most 64 loaded, and 150 users' collections make most of them evicted.
// Collections the adapter creates write their index from the first vector, so users whose index
// was evicted still get their answers, also after a restart.
// (With Chroma's defaults an evicted index that was never written fails its query, "Nothing found
// on disk"; bench/chroma-scale.bench.ts shows it from several hundred collections, not at this size.)

const CAPACITY = 2;
const USERS = 150;
/** What a capacity of 2 keeps loaded at most: one index in each of the cache's 64 shards. */
const MOST_LOADED = 64;
const dataDir = join(tmpdir(), `jarvis-chroma-cache-${randomBytes(4).toString('hex')}`);
const prefix = `cc_${randomBytes(3).toString('hex')}`;
const rand = mulberry32(23);
const vector = () => {
  const v = Array.from({ length: 384 }, () => rand() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const id = (user: number, i: number) => `00000000-0000-4000-8000-${String(user * 100 + i).padStart(12, '0')}`;

let chromaPath: string;
let port: number;
let chroma: LocalChroma;
/** Files the server holds open with no collection loaded. */
let baseFiles: number;
const openFiles = () => readdirSync(`/proc/${chroma.process.child.pid}/fd`).length;
const start = async () => startLocalChroma({ chromaPath, dataDir, port, logFile: join(dataDir, 'chroma.log'), indexCache: CAPACITY });

beforeAll(async () => {
  const found = findExecutable('chroma', { stackDir: '.stack' });
  if (!found) throw new Error('chroma executable not found; run npm run setup');
  chromaPath = found;
  port = await freePort();
  chroma = await start();
  baseFiles = openFiles();
});

afterAll(async () => {
  await chroma?.process.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Each user's vectors, written one at a time as decisions write them. */
const vectors = new Map<number, number[][]>();

describe('Chroma with a bounded index cache', () => {
  it('sizes the cache by the open-file limit, four files per loaded index', () => {
    expect(chroma.indexCache).toBe(CAPACITY);
    expect(indexCacheFor(1024)).toBe(192);
    expect(indexCacheFor(20_000)).toBe(256);
    expect(indexCacheFor(256)).toBe(64);
  });

  it('creates each user collection with its index written from the first vector', async () => {
    const index = await ChromaVectorIndex.create({ url: chroma.url, collection: prefix });
    vectors.set(0, [vector()]);
    await index.upsert({ userId: 'user-0', items: [{ id: id(0, 0), embedding: vectors.get(0)![0]!, type: 'fact', createdAt: new Date().toISOString() }] });
    const stored = await chromaClient(chroma.url).getCollection({ name: index.collectionName('user-0'), embeddingFunction: null as never });
    expect(stored.configuration.hnsw?.sync_threshold).toBe(1);
  });

  it('answers users whose index was evicted, before and after a restart', async () => {
    const index = await ChromaVectorIndex.create({ url: chroma.url, collection: prefix });
    for (let u = 1; u < USERS; u++) {
      // Most users hold one vector; every tenth gets three, written one at a time.
      vectors.set(u, u % 10 === 0 ? [vector(), vector(), vector()] : [vector()]);
      for (const [i, embedding] of vectors.get(u)!.entries()) {
        await index.upsert({ userId: `user-${u}`, items: [{ id: id(u, i), embedding, type: 'fact', createdAt: new Date().toISOString() }] });
      }
    }
    const ask = async (idx: ChromaVectorIndex) => {
      // Oldest first: at most 64 of the 150 indexes are loaded.
      for (let u = 0; u < USERS; u++) {
        const own = vectors.get(u)!;
        const hits = await idx.query({ userId: `user-${u}`, embedding: own.at(-1)!, k: 10 });
        expect(hits[0]?.id).toBe(id(u, own.length - 1));
        expect(hits.map((h) => h.id).sort()).toEqual(own.map((_, i) => id(u, i)).sort());
      }
    };
    await ask(index);
    // Evicted indexes close their files: 150 loaded ones would hold four each.
    expect(openFiles()).toBeLessThanOrEqual(baseFiles + 4 * MOST_LOADED + 8);
    await chroma.process.stop();
    chroma = await start();
    await ask(await ChromaVectorIndex.create({ url: chroma.url, collection: prefix }));
  });

  it('gives a collection created before the setting the setting, so its next write survives eviction', async () => {
    const index = await ChromaVectorIndex.create({ url: chroma.url, collection: prefix });
    const client = chromaClient(chroma.url);
    const name = index.collectionName('legacy');
    const legacy = await client.createCollection({ name, embeddingFunction: null, configuration: { hnsw: { space: 'cosine' } }, metadata: { user_id: 'legacy', kind: 'memories' } });
    expect(legacy.configuration.hnsw?.sync_threshold).toBe(1000);
    const first = vector();
    await legacy.add({ ids: [id(99, 0)], embeddings: [first], metadatas: [{ user_id: 'legacy', type: 'fact' }] });
    const second = vector();
    await index.upsert({ userId: 'legacy', items: [{ id: id(99, 1), embedding: second, type: 'fact', createdAt: new Date().toISOString() }] });
    expect((await client.getCollection({ name, embeddingFunction: null as never })).configuration.hnsw?.sync_threshold).toBe(1);
    // Evict it: every other user's index passes through the cache.
    for (let u = 0; u < USERS; u++) await index.query({ userId: `user-${u}`, embedding: vector(), k: 1 });
    const hits = await index.query({ userId: 'legacy', embedding: second, k: 10 });
    expect(hits.map((h) => h.id).sort()).toEqual([id(99, 0), id(99, 1)]);
  });
});
