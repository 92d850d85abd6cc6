import http from 'node:http';
import https from 'node:https';
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

/**
 * The Chroma client's requests over node:http(s) with a keep-alive agent, instead of the global
 * `fetch` the client uses by default.
 *
 * Why: undici's `fetch` registers every response in a `FinalizationRegistry` and keeps a `WeakRef`
 * to its body stream. V8's young-generation collector treats both as strong, so each Chroma call's
 * response, headers, streams and buffers survive every scavenge until the next full collection:
 * with a query per recall, each scavenge of the API process copied ~1.2 MiB and promoted ~1.1 MiB
 * and stopped every request in flight for 2–7 ms (docs/benchmarks.md, "What a scavenge
 * promotes"). Over node:http the same calls promote almost nothing.
 *
 * What the default `fetch` did and this keeps: the client's error classes, status by status
 * (`errorFor`, and test/chroma-transport.test.ts compares every status with the stock client),
 * keep-alive connections, TLS for an `https` Chroma, a response timeout as long as undici's.
 */

/** undici's own limit on waiting for headers and between body chunks. */
const RESPONSE_TIMEOUT_MS = 300_000;
/** Idle sockets are closed after this, below the keep-alive window servers commonly allow (undici's default is the same). */
const IDLE_SOCKET_MS = 4_000;

type Transport = (request: Request) => Promise<Response>;

/** The part of the client's generated API layer the transport is set on (a private field of `ChromaClient`). */
interface ApiClient {
  setConfig(config: { fetch: Transport }): unknown;
  getConfig(): { fetch?: unknown };
}

/**
 * Sends every request of `client` (and of the collections it hands out, which share its API layer)
 * through {@link chromaTransport}. Returns false, changing nothing, when the client no longer has
 * the layer this expects; test/chroma-transport.test.ts fails then, so an upgrade that moves it is
 * noticed rather than silently slower.
 */
export function useChromaTransport(client: ChromaClient): boolean {
  const api = (client as unknown as { apiClient?: Partial<ApiClient> }).apiClient;
  if (typeof api?.setConfig !== 'function' || typeof api.getConfig !== 'function') return false;
  api.setConfig({ fetch: chromaTransport() });
  return api.getConfig().fetch !== undefined;
}

/** A `fetch` for the Chroma client: one request, its whole answer buffered (Chroma's answers are JSON), errors as the client's own. */
export function chromaTransport(): Transport {
  const agents = { 'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }), 'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }) };
  return async (request) => {
    if (request.signal.aborted) throw request.signal.reason;
    const url = new URL(request.url);
    const agent = url.protocol === 'https:' ? agents['https:'] : url.protocol === 'http:' ? agents['http:'] : undefined;
    if (!agent) throw new ChromaConnectionError(`Chroma URL ${url.origin} is neither http nor https`);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    let answer: { status: number; statusText: string; headers: Headers; body: Buffer };
    try {
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => (headers[name] = value));
      answer = await send(url, { method: request.method, headers, agent }, body);
    } catch (err) {
      throw new ChromaConnectionError(`Failed to connect to Chroma at ${url.origin}: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    // 204 and 304 may carry no body in a Response.
    const response = new Response(answer.status === 204 || answer.status === 304 ? null : new Uint8Array(answer.body), { status: answer.status, statusText: answer.statusText, headers: answer.headers });
    if (response.ok) return response;
    throw await errorFor(response, request.url);
  };
}

function send(url: URL, options: http.RequestOptions, body: Buffer | undefined): Promise<{ status: number; statusText: string; headers: Headers; body: Buffer }> {
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers, body: Buffer.concat(chunks) });
      });
    });
    req.setTimeout(RESPONSE_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${RESPONSE_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
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
