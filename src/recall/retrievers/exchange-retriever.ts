import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import type { RankedExchange } from '../../core/recall/exchanges';
import { MEMORY_ROUTE_NAMESPACE } from './memory-route';

/** What one exchange search answers: the exchanges best first, with its own sub-routes' report and failures. */
export interface ExchangeSearchOutcome {
  exchanges: RankedExchange[];
  routes: { route: string; ok: boolean; ms: number; hits: number }[];
  failures: { route: string; err: unknown }[];
}

/** An exchange Document's metadata: the exchange itself, and its citable identity. */
export interface ExchangeMetadata extends Record<string, unknown> {
  route: 'exchanges';
  exchange: RankedExchange;
  conversationId: string;
  messageIds: string[];
  date: string;
  score: number;
}

export interface ExchangeRetrieverInput<R extends ExchangeSearchOutcome> extends BaseRetrieverInput {
  /** The exchange search for one query (keywords, named dates, episodes). */
  search: (query: string) => Promise<R>;
  /**
   * Sees each search's full outcome: its sub-routes may fail one by one while the others still
   * answer, which Documents alone cannot say. Recall folds these into its route report.
   */
  onSearched?: (outcome: R) => void;
}

/**
 * The exchanges route as a LangChain retriever: past user + assistant lines, best first. Each
 * Document's `pageContent` is the exchange as the prompt shows it ("user: … / assistant: …"),
 * `id` its key, and `metadata.exchange` the exchange with its message ids, date and routes.
 */
export class ExchangeRetriever<R extends ExchangeSearchOutcome = ExchangeSearchOutcome> extends BaseRetriever {
  static override lc_name() {
    return 'ExchangeRetriever';
  }
  override lc_namespace = MEMORY_ROUTE_NAMESPACE;
  private readonly search: (query: string) => Promise<R>;
  private readonly onSearched?: (outcome: R) => void;

  constructor(fields: ExchangeRetrieverInput<R>) {
    super(fields);
    this.search = fields.search;
    this.onSearched = fields.onSearched;
  }

  override async _getRelevantDocuments(query: string): Promise<Document<ExchangeMetadata>[]> {
    const outcome = await this.search(query);
    this.onSearched?.(outcome);
    return outcome.exchanges.map(exchangeDocument);
  }
}

export function exchangeDocument(exchange: RankedExchange): Document<ExchangeMetadata> {
  const lines = [exchange.user ? `user: ${exchange.user.content}` : undefined, exchange.assistant ? `assistant: ${exchange.assistant.content}` : undefined];
  return new Document<ExchangeMetadata>({
    id: exchange.key,
    pageContent: lines.filter((l) => l !== undefined).join('\n'),
    metadata: { route: 'exchanges', exchange, conversationId: exchange.conversationId, messageIds: exchange.messageIds, date: exchange.date.toISOString(), score: exchange.score },
  });
}

/** The exchanges of an exchange retriever's Documents, in order. */
export function exchangesOf(docs: readonly Document[]): RankedExchange[] {
  return docs.flatMap((d) => (d.metadata.route === 'exchanges' && d.metadata.exchange ? [d.metadata.exchange as RankedExchange] : []));
}
