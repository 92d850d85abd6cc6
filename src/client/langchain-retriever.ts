import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { Document } from '@langchain/core/documents';
import type { MemoryClient, RecallRequest } from './index.js';

export interface MemoryRetrieverInput extends BaseRetrieverInput {
  client: MemoryClient;
  userId: string;
  recall?: Omit<RecallRequest, 'query'>;
}

/**
 * LangChain retriever over the memory service: each recalled memory becomes a Document (metadata
 * carries id, type, score and routes), so a chain can use a user's memory like any retriever.
 * A degraded recall (a route down) still returns what the other routes found.
 */
export class MemoryRetriever extends BaseRetriever {
  static override lc_name() {
    return 'MemoryRetriever';
  }
  override lc_namespace = ['jarvis_memory', 'retrievers'];
  private readonly client: MemoryClient;
  private readonly userId: string;
  private readonly recallOptions: Omit<RecallRequest, 'query'>;

  constructor(fields: MemoryRetrieverInput) {
    super(fields);
    this.client = fields.client;
    this.userId = fields.userId;
    this.recallOptions = fields.recall ?? {};
  }

  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    const result = await this.client.recall(this.userId, { ...this.recallOptions, query });
    return result.memories.map(
      (m) => new Document({ pageContent: m.text, metadata: { id: m.id, type: m.type, scope: m.scope, score: m.score, routes: m.routes, createdAt: m.createdAt, recallError: result.error?.code } }),
    );
  }
}
