import http from 'node:http';
import https from 'node:https';

/**
 * One HTTP exchange over node:http(s) with keep-alive agents: the body is sent whole and the
 * answer read whole. The service's own HTTP clients (Chroma, the embeddings endpoint) use this
 * rather than the global `fetch`: in Node 20 undici's `fetch` registers every response in a
 * `FinalizationRegistry` and keeps a `WeakRef` to its body stream, and V8's young-generation
 * collector treats both as strong, so each call's objects outlived every scavenge until the next
 * full collection and made each scavenge of an API process slower (docs/decisions.md, "Our HTTP
 * clients over node:http").
 */
export interface HttpAnswer {
  status: number;
  statusText: string;
  /** Names and values in arrival order, as node:http gives them. */
  rawHeaders: string[];
  body: Buffer;
}

export interface HttpExchange {
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Longest the whole exchange may take, from the request on: past it the request is destroyed and the promise rejects with an error named `TimeoutError`. */
  timeoutMs: number;
}

/** Idle sockets are closed after this, below the keep-alive window servers commonly allow (undici's own default is the same). */
const IDLE_SOCKET_MS = 4_000;

export class KeepAliveHttp {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  };

  /** Rejects on a refused or broken connection and on the time limit; any status is an answer. */
  send(url: URL, exchange: HttpExchange): Promise<HttpAnswer> {
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') return Promise.reject(new Error(`${url.origin} is neither http nor https`));
    const request = secure ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(url, { method: exchange.method, headers: exchange.headers, agent: this.agents[secure ? 'https:' : 'http:'] }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) });
        });
      });
      const timer = setTimeout(() => {
        const err = new Error(`no answer from ${url.origin} in ${exchange.timeoutMs} ms`);
        err.name = 'TimeoutError';
        req.destroy(err);
      }, exchange.timeoutMs);
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(exchange.body);
    });
  }
}
