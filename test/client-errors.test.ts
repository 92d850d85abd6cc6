import { connect } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { clientErrorHandler, frameworkErrors } from '../src/api/errors';

/** Sends raw bytes and returns everything the server wrote before it closed the connection. */
async function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer')));
  });
}

describe('requests refused before a route runs', () => {
  it('answers what the HTTP parser refuses in the API error shape, with the security headers', async () => {
    const app = Fastify({ clientErrorHandler });
    app.get('/x', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    try {
      for (const [request, status] of [
        ['GARBAGE\r\n\r\n', 400],
        ['GET /x HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', 400],
        [`GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ] as const) {
        const answer = await raw(port, request);
        expect(answer.startsWith(`HTTP/1.1 ${status} `), answer).toBe(true);
        expect(answer.toLowerCase()).toContain("content-security-policy: default-src 'none'");
        const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
        expect(Object.keys(body)).toEqual(['error']);
        expect(typeof body.error.code).toBe('string');
        expect(typeof body.error.message).toBe('string');
      }
    } finally {
      await app.close();
    }
  });

  it('answers a malformed percent-encoding with the security headers too', async () => {
    const app = Fastify({ frameworkErrors });
    app.get('/x/:id', async () => ({ ok: true }));
    const res = await app.inject({ method: 'GET', url: '/x/%ZZ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: { code: 'validation_failed', message: 'the path is not validly percent-encoded' } });
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    await app.close();
  });
});
