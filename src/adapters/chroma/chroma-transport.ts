import {
  ChromaClient,
  ChromaClientError,
  ChromaConnectionError,
  ChromaForbiddenError,
  ChromaNotFoundError,
  ChromaQuotaExceededError,
  ChromaRateLimitError,
  ChromaServerError,
  ChromaUnauthorizedError,
  ChromaUniqueError,
} from 'chromadb';
import { KeepAliveHttp } from '../http/keep-alive-http';

/**
 * The Chroma client's requests over node:http(s) with keep-alive agents (../http/keep-alive-http.ts),
 * instead of the global `fetch` the client uses by default: each fetch's response outlived every
 * scavenge until the next full collection, and one or two Chroma calls per recall made every
 * scavenge of an API process slower (docs/decisions.md, "Our HTTP clients over node:http").
 *
 * What the default `fetch` did and this keeps: the client's error classes and messages, status by
 * status (`errorFor`; test/chroma-transport.test.ts compares every status with the stock client),
 * keep-alive connections, TLS for an `https` Chroma, and a time limit as long as undici's.
 */

/** undici's own limit on waiting for an answer. */
const RESPONSE_TIMEOUT_MS = 300_000;

type Transport = (request: Request) => Promise<Response>;

/** The part of the client's generated API layer the transport is set on (a private field of `ChromaClient`). */
interface ApiClient {
  setConfig(config: { fetch: Transport }): unknown;
}

/**
 * Sends every request of `client` (and of the collections it hands out, which share its API layer)
 * through {@link chromaTransport}. Returns false, changing nothing, when the client no longer has
 * the layer this expects; test/chroma-transport.test.ts fails then, so an upgrade that moves it is
 * noticed rather than silently slower.
 */
export function useChromaTransport(client: ChromaClient): boolean {
  const api = (client as unknown as { apiClient?: Partial<ApiClient> }).apiClient;
  if (typeof api?.setConfig !== 'function') return false;
  api.setConfig({ fetch: chromaTransport() });
  return true;
}

/** A `fetch` for the Chroma client: one request, its whole answer buffered (Chroma's answers are JSON), errors as the client's own. */
export function chromaTransport(): Transport {
  const http = new KeepAliveHttp();
  return async (request) => {
    if (request.signal.aborted) throw request.signal.reason;
    const url = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    let answer;
    try {
      answer = await http.send(url, { method: request.method, headers, ...(body ? { body } : {}), timeoutMs: RESPONSE_TIMEOUT_MS });
    } catch (err) {
      throw new ChromaConnectionError(`Failed to connect to Chroma at ${url.origin}: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    const responseHeaders = new Headers();
    for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) responseHeaders.append(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
    // 204 and 304 may carry no body in a Response.
    const response = new Response(answer.status === 204 || answer.status === 304 ? null : new Uint8Array(answer.body), { status: answer.status, statusText: answer.statusText, headers: responseHeaders });
    if (response.ok) return response;
    throw await errorFor(response, request.url);
  };
}

/** The error the stock client throws for a status that is not ok: the same classes and messages, so callers' `instanceof` checks and logs hold. */
async function errorFor(response: Response, requestUrl: string): Promise<Error> {
  const body = await jsonOf(response);
  const said = (field: 'message' | 'error') => (typeof body?.[field] === 'string' && body[field] ? body[field] : undefined);
  switch (response.status) {
    case 400:
      return new ChromaClientError(`Bad request to ${requestUrl} with status: ${said('message') ?? 'Bad Request'}`);
    case 401:
      return new ChromaUnauthorizedError('Unauthorized');
    case 403:
      return new ChromaForbiddenError('You do not have permission to access the requested resource.');
    case 404:
      return new ChromaNotFoundError('The requested resource could not be found');
    case 409:
      return new ChromaUniqueError('The resource already exists');
    case 422: {
      const message = said('message');
      if (message?.startsWith('Quota exceeded') || message?.startsWith('Billing limit exceeded')) return new ChromaQuotaExceededError(message);
      return new ChromaClientError(body === undefined ? `Unprocessable Entity: ${response.statusText}` : (message ?? 'Unprocessable Entity'));
    }
    case 429:
      return new ChromaRateLimitError('Rate limit exceeded');
    default:
      return new ChromaServerError(said('message') ?? said('error') ?? `${response.status}: ${response.statusText}`);
  }
}

/** An error answer's body when it is a JSON object; undefined when it is not JSON. */
async function jsonOf(response: Response): Promise<Record<string, unknown> | null | undefined> {
  try {
    const body: unknown = await response.json();
    return body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : null;
  } catch {
    return undefined;
  }
}
