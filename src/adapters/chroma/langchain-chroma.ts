import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { Chroma } from '@langchain/community/vectorstores/chroma';
import type { ChromaClient, Collection, Where } from 'chromadb';
import type { VectorHit } from '../../core/ports/memory';

/**
 * Embeddings of a store that is only ever searched by vector: the caller embedded the query once
 * already (recall shares one vector among its routes), so the store must not embed it again.
 */
const SEARCHED_BY_VECTOR: EmbeddingsInterface = {
  embedQuery: () => Promise.reject(new Error('this Chroma store is searched by vector (similaritySearchVectorWithScore); embed the query first')),
  embedDocuments: () => Promise.reject(new Error('this Chroma store is written through ChromaVectorIndex.upsert, not addDocuments')),
};

/**
 * LangChain's `Chroma` vector store (@langchain/community) on one user's own collection. The store
 * is handed the collection UserCollections resolved (never creating one on a read) instead of
 * letting `ensureCollection` resolve it: in @langchain/community 1.1 that calls
 * `getOrCreateCollection` without our collection configuration, which would create a collection
 * in L2 space for a user who has none yet. Stores are kept per collection handle, so a handle
 * dropped from the cache (or replaced after a purge) takes its store with it.
 */
export class UserChromaStores {
  private readonly stores = new WeakMap<Collection, Chroma>();

  constructor(private readonly client: ChromaClient) {}

  storeOf(collection: Collection): Chroma {
    let store = this.stores.get(collection);
    if (!store) {
      store = new Chroma(SEARCHED_BY_VECTOR, { index: this.client, collectionName: collection.name });
      store.collection = collection;
      this.stores.set(collection, store);
    }
    return store;
  }
}

/**
 * k nearest neighbours through the store, as similarities (the collections are in cosine space,
 * LangChain's score is Chroma's distance). The collection already is the user filter; hits whose
 * record names another owner in `user_id` are dropped all the same (the second lock). A
 * `where: { user_id }` sent to Chroma would make it scan the user's records before the search.
 */
export async function nearestOwnedThroughLangChain(store: Chroma, userId: string, query: { embedding: number[]; k: number; where?: Where }): Promise<VectorHit[]> {
  const results = await store.similaritySearchVectorWithScore(query.embedding, query.k, query.where);
  return results.flatMap(([doc, distance]) => (doc.metadata.user_id === userId && doc.id !== undefined ? [{ id: doc.id, similarity: 1 - distance }] : []));
}
