import { request as httpRequest } from 'node:http';
import { HEALTH_PROBE_TIMEOUT_MS } from '../src/shared/health';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deadTemporalClient } from './support/proxied-temporal';
import { API_SECURITY_HEADERS, PAGE_CSP } from '../src/api/page-session';
import { logPseudonym } from '../src/logging';
import { ServiceSecrets } from '../src/security/secrets';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// Issue #20 (part 5) against the real API: security headers on every route, /mcp's Origin and
// Host checks, what public /healthz tells, and what a request log line says about the user.

let ctx: TestContext;
let port: number;
/** Every line the process logger wrote to stdout while this file ran (json format). */
const logLines: string[] = [];

beforeAll(async () => {
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (text.startsWith('{"level"')) {
      logLines.push(...text.split('\n').filter(Boolean));
      return true;
    }
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write);
  ctx = await createTestContext({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
  port = Number(new URL(ctx.baseUrl).port);
});
afterAll(async () => {
  await ctx?.close();
  vi.restoreAllMocks();
});

/** A raw request: fetch() cannot send another Host header. */
function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('security headers on every route', () => {
  it('every route of the OpenAPI document, the page, its files, /mcp and unknown paths carry them, with and without a key', async () => {
    const doc = (await (await fetch(`${ctx.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const user = `${ctx.prefix}-walker`;
    const targets: { method: string; path: string; key: boolean }[] = [];
    for (const [template, ops] of Object.entries(doc.paths)) {
      const path = template.replace(/\{userId\}/g, user).replace(/\{[^}]+\}/g, 'x');
      for (const method of Object.keys(ops)) {
        targets.push({ method: method.toUpperCase(), path, key: false });
        // Reads also with the key: the answer a client really gets. Writes stay unsent (no side effects).
        if (method === 'get' && !template.endsWith('/events')) targets.push({ method: 'GET', path, key: true });
      }
    }
    expect(targets.length).toBeGreaterThan(40);
    const extra = ['/healthz', '/openapi.json', '/app', '/app/', '/app/app.js', '/app/app.css', '/nope', '/v1/users/x/nope'];
    for (const path of extra) targets.push({ method: 'GET', path, key: true });
    targets.push({ method: 'GET', path: '/mcp', key: true }, { method: 'POST', path: '/mcp', key: false });

    const missing: string[] = [];
    for (const t of targets) {
      const res = await raw(t.method, t.path, { host: `127.0.0.1:${port}`, ...(t.key ? { authorization: `Bearer ${TEST_KEY}`, 'x-memory-user': user } : {}), ...(t.method !== 'GET' ? { 'content-type': 'application/json' } : {}) }, t.method !== 'GET' && t.method !== 'DELETE' ? '{}' : undefined);
      for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) {
        const got = res.headers[name];
        // The page's own files carry the page's CSP instead of the API's.
        const expected = name === 'content-security-policy' && ['/app', '/app/app.js', '/app/app.css', '/app/'].includes(t.path) ? PAGE_CSP : value;
        if (got !== expected) missing.push(`${t.method} ${t.path}${t.key ? ' (key)' : ''} → ${res.status}: ${name}=${String(got)}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('the routes the page calls also say no-store, whichever credential came', async () => {
    const user = `${ctx.prefix}-walker`;
    for (const path of ['reminders', 'settings', 'notifications', 'memories']) {
      for (const key of [true, false]) {
        const res = await raw('GET', `/v1/users/${user}/${path}`, { host: `127.0.0.1:${port}`, ...(key ? { authorization: `Bearer ${TEST_KEY}` } : {}) });
        expect(res.headers['cache-control'], `${path} ${key} ${res.status}`).toBe('no-store');
      }
    }
  });
});

describe('/mcp Origin and Host (DNS rebinding)', () => {
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'origin-test', version: '1' } } });
  const base = () => ({ authorization: `Bearer ${TEST_KEY}`, 'x-memory-user': `${ctx.prefix}-mcp`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

  it('serves a client that sends no Origin on a loopback Host', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const res = await raw('POST', '/mcp', { ...base(), host }, initialize);
      expect(res.status, res.body).toBe(200);
    }
  });

  it('refuses a browser page of another origin, and a rebound name, with 403 and a reason', async () => {
    for (const origin of ['https://evil.example', `http://127.0.0.1:${port}`, 'null']) {
      const res = await raw('POST', '/mcp', { ...base(), host: `127.0.0.1:${port}`, origin }, initialize);
      expect(res.status, origin).toBe(403);
      expect(JSON.parse(res.body).error).toMatchObject({ code: 'forbidden', details: { reason: 'origin_not_allowed' } });
    }
    // DNS rebinding: the attacker's name resolves to 127.0.0.1; the browser sends it as Host (and as Origin).
    for (const host of [`evil.example:${port}`, `localhost.evil.example:${port}`]) {
      const res = await raw('POST', '/mcp', { ...base(), host }, initialize);
      expect(res.status, host).toBe(403);
      expect(JSON.parse(res.body).error).toMatchObject({ code: 'forbidden', details: { reason: 'host_not_allowed' } });
    }
    // GET and DELETE are refused the same way before the 405.
    expect((await raw('GET', '/mcp', { ...base(), host: `127.0.0.1:${port}`, origin: 'https://evil.example' })).status).toBe(403);
  });
});

describe('request logs', () => {
  it('a real request for an e-mail user id logs its pseudonym, never the id', async () => {
    const user = `${ctx.prefix}-dora@example.com`;
    const res = await fetch(`${ctx.baseUrl}/v1/users/${encodeURIComponent(user)}/memories?limit=3`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    const pseudonym = logPseudonym(new ServiceSecrets(ctx.runtime.config.secretKey).key('log-pseudonym'))(user);
    const records = logLines.map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } });
    expect(records.some((r) => r.msg === 'incoming request' && r.req?.url === `/v1/users/${pseudonym}/memories?limit=3`)).toBe(true);
    expect(logLines.join('\n')).not.toContain('dora');
  });
});

describe('/healthz', () => {
  it('tells a probe only the status of each dependency; the error goes to the log and to the operator token', async () => {
    const { temporal: deadTemporal, port: closed } = await deadTemporalClient(ctx.runtime.config.temporal.namespace);
    const api = await ctx.runtime.createApi({ taskQueue: ctx.taskQueue, temporal: deadTemporal });
    try {
      const before = logLines.length;
      const publicView = await api.inject({ method: 'GET', url: '/healthz' });
      expect(publicView.statusCode).toBe(503);
      expect(publicView.json().checks.temporal).toEqual({ status: 'down' });
      for (const c of Object.values(publicView.json().checks as Record<string, object>)) expect(Object.keys(c)).toEqual(['status']);
      expect(publicView.body).not.toContain(String(closed));
      expect(publicView.body).not.toMatch(/error|ECONNREFUSED|UNAVAILABLE/i);
      // The detail is logged for the operator…
      await new Promise((r) => setTimeout(r, 100));
      const logged = logLines.slice(before).map((l) => JSON.parse(l) as { msg?: string; dependency?: string; error?: string });
      expect(logged.find((r) => r.msg === 'health check failed' && r.dependency === 'temporal')?.error).toBeTruthy();
      // …and shown with the operator token; a tenant key is no operator.
      const operator = await api.inject({ method: 'GET', url: '/healthz', headers: { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` } });
      expect(operator.json().checks.temporal.error).toBeTruthy();
      expect(typeof operator.json().checks.postgres.latencyMs).toBe('number');
      const tenant = await api.inject({ method: 'GET', url: '/healthz', headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(tenant.json().checks.temporal).toEqual({ status: 'down' });
    } finally {
      await api.close();
      // The probes' calls retry the dead server until their deadline; a retry timer that fires
      // after the connection is closed throws from the timer, so close it only past the deadline.
      await new Promise((r) => setTimeout(r, HEALTH_PROBE_TIMEOUT_MS + 1000));
      await deadTemporal.connection.close().catch(() => undefined);
    }
  });
});
