import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/** One request the fake upstream received. */
export interface UpstreamRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * A local OpenAI-compatible chat completions server on 127.0.0.1 for the proxy's tests: it records
 * every request and answers `reply` — as one JSON completion, or, for `stream: true`, as an SSE
 * stream of small deltas ending in `data: [DONE]`. The model `upstream-error` gets a 400 in
 * OpenAI's error shape; `upstream-429` and `upstream-500` fail with the upstream key and internal
 * details in body and headers; `upstream-slow` does not answer for 30 s.
 */
export class FakeOpenAI {
  readonly requests: UpstreamRequest[] = [];
  reply = 'Peanuts are off the menu for you; try rice crackers.';
  /** The exact bytes of the last streamed answer, to compare with what the caller received. */
  lastStream = '';
  private server?: Server;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        this.requests.push({ path: req.url ?? '', headers: req.headers, body });
        if (req.url !== '/v1/chat/completions') {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
          return;
        }
        // Failures whose body and headers carry what must not reach the proxy's caller.
        if (body.model === 'upstream-429') {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7', 'x-ratelimit-remaining-requests': '0', 'openai-organization': 'org-operator' }).end(JSON.stringify({ error: { message: `Rate limit reached for org-operator (key ${String(req.headers.authorization)})`, type: 'requests' } }));
          return;
        }
        if (body.model === 'upstream-500') {
          res.writeHead(500, { 'content-type': 'application/json', 'x-upstream-secret': 'internal-host-10.0.0.7' }).end(JSON.stringify({ error: { message: `internal failure at 10.0.0.7 with ${String(req.headers.authorization)}` } }));
          return;
        }
        if (body.model === 'upstream-slow') {
          // Answers long after any sane deadline (the test's proxy gives up first).
          const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 30_000);
          res.on('close', () => clearTimeout(timer));
          return;
        }
        if (body.model === 'upstream-error') {
          res.writeHead(400, { 'content-type': 'application/json', 'x-request-id': 'req_err' }).end(JSON.stringify({ error: { message: 'The model `upstream-error` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }));
          return;
        }
        const id = `chatcmpl-${this.requests.length}`;
        const created = 1_767_000_000;
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': `req_${this.requests.length}` });
          const pieces = this.reply.match(/.{1,7}/gsu) ?? [];
          const events = [
            { id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
            ...pieces.map((p) => ({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })),
            { id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
          ];
          const frames = [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'];
          this.lastStream = frames.join('');
          // Frame by frame, with a pause, so the answer really streams.
          const send = (i: number) => {
            if (i >= frames.length) return void res.end();
            res.write(frames[i]);
            setTimeout(() => send(i + 1), 5);
          };
          send(0);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${this.requests.length}` }).end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: this.reply }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
  }

  last(): UpstreamRequest {
    const r = this.requests.at(-1);
    if (!r) throw new Error('the upstream received nothing');
    return r;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
