import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { bundlerLogger, createLogger, fastifyLogging, logPseudonym, redactUrl, requestLogSerializers, temporalLogger } from '../src/logging';

const pseudonym = logPseudonym(Buffer.alloc(32, 3));

function capture(): { stream: PassThrough; lines: () => Promise<string[]> } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return {
    stream,
    lines: async () => {
      await sleep(20);
      return text.split('\n').filter(Boolean);
    },
  };
}

async function serveOnce(format: 'pretty' | 'json', url = '/v1/users/alice/memories?limit=5'): Promise<string[]> {
  const out = capture();
  const logger = createLogger({ level: 'info', format }, out.stream);
  const app = Fastify(fastifyLogging(logger, format, pseudonym));
  app.get('/v1/users/:u/memories', async () => ({ memories: [] }));
  await app.inject({ method: 'GET', url });
  await app.close();
  return out.lines();
}

describe('LOG_FORMAT', () => {
  it('defaults to pretty outside production and json in production', () => {
    expect(loadConfig({}).logFormat).toBe('pretty');
    expect(loadConfig({ NODE_ENV: 'test' }).logFormat).toBe('pretty');
    expect(loadConfig({ NODE_ENV: 'development', LOG_FORMAT: 'json' }).logFormat).toBe('json');
    const production = { NODE_ENV: 'production', API_KEYS: `t:${'k'.repeat(40)}`, SECRET_KEY: 's'.repeat(40), PAYLOAD_MASTER_KEY: Buffer.alloc(32, 1).toString('base64') };
    expect(loadConfig(production).logFormat).toBe('json');
    expect(loadConfig({ ...production, LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(/LOG_FORMAT/);
  });

  it('pretty: one readable line per request, no JSON', async () => {
    const lines = await serveOnce('pretty');
    const requests = lines.filter((l) => l.includes(`/v1/users/${pseudonym('alice')}/memories`));
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatch(/INFO.*GET \/v1\/users\/u_[\w-]{16}\/memories\?limit=5 → 200 \(\d+\.\d ms\)/);
    expect(lines.join('\n')).not.toContain('alice');
    expect(lines.some((l) => l.trimStart().startsWith('{'))).toBe(false);
    expect(lines.join('\n')).not.toMatch(/incoming request|"req":|"res":/);
  });

  it('json: Fastify request and response records, one JSON object per line', async () => {
    const lines = await serveOnce('json');
    const records = lines.map((l) => JSON.parse(l) as { msg: string; req?: { url: string }; res?: { statusCode: number } });
    expect(records.map((r) => r.msg)).toEqual(['incoming request', 'request completed']);
    expect(records[0]!.req!.url).toBe(`/v1/users/${pseudonym('alice')}/memories?limit=5`);
    expect(lines.join('\n')).not.toContain('alice');
    expect(records[1]!.res!.statusCode).toBe(200);
  });

  it("Temporal's logger goes through the same formatter, and webpack's build report only at debug", async () => {
    const out = capture();
    const sdk = temporalLogger(createLogger({ level: 'info', format: 'pretty' }, out.stream));
    const bundler = bundlerLogger(sdk);
    sdk.info('Worker state changed', { sdkComponent: 'worker', state: 'RUNNING' });
    bundler.info('asset workflow-bundle-1234.js 1.9 MiB [emitted]\norphan modules 600 KiB\nwebpack compiled successfully');
    bundler.log('INFO', 'cacheable modules 2 MiB');
    bundler.info('Workflow bundle created', { size: '1.9MB' });
    bundler.error('Webpack finished with errors');
    const lines = await out.lines();
    expect(lines.some((l) => /INFO.*Worker state changed.*"state":"RUNNING"/.test(l))).toBe(true);
    expect(lines.some((l) => /Workflow bundle created/.test(l))).toBe(true);
    expect(lines.some((l) => /ERROR.*Webpack finished with errors/.test(l))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/asset workflow-bundle|orphan modules|cacheable modules/);
  });
});

describe('user ids in request logs', () => {
  it('replaces the user segment of a URL with a keyed pseudonym, however the path spells it', () => {
    const p = pseudonym('alice@example.com');
    expect(p).toMatch(/^u_[\w-]{16}$/);
    // Keyed: another secret gives another pseudonym; stable: the same user lines up across requests.
    expect(logPseudonym(Buffer.alloc(32, 4))('alice@example.com')).not.toBe(p);
    expect(pseudonym('alice@example.com')).toBe(p);
    expect(redactUrl('/v1/users/alice@example.com/memories?limit=5', pseudonym)).toBe(`/v1/users/${p}/memories?limit=5`);
    expect(redactUrl('/v1/users/alice%40example.com/memories', pseudonym)).toBe(`/v1/users/${p}/memories`);
    expect(redactUrl('/v%31/%75sers/alice%40example.com', pseudonym)).toBe(`/v%31/%75sers/${p}`);
    expect(redactUrl('/v1/USERS/alice@example.com/', pseudonym)).toBe(`/v1/USERS/${p}/`);
    expect(redactUrl('/v1/users/%E0%A4%A/x', pseudonym)).toBe(`/v1/users/${pseudonym('%E0%A4%A')}/x`);
    expect(redactUrl('/v1/users/', pseudonym)).toBe('/v1/users/');
    expect(redactUrl('/healthz', pseudonym)).toBe('/healthz');
  });

  it("the request serializer never hands the raw id to the log", () => {
    const req = requestLogSerializers(pseudonym).req({ method: 'GET', url: '/v1/users/bob@example.com/export', host: 'h', ip: '::1', socket: { remotePort: 1 } } as never);
    expect(req).toEqual({ method: 'GET', url: `/v1/users/${pseudonym('bob@example.com')}/export`, host: 'h', remoteAddress: '::1', remotePort: 1 });
    expect(JSON.stringify(req)).not.toContain('bob');
  });

  it('json and pretty lines of a request for an e-mail user id carry only the pseudonym', async () => {
    for (const format of ['json', 'pretty'] as const) {
      const lines = await serveOnce(format, '/v1/users/carol%40example.com/memories');
      expect(lines.join('\n'), format).toContain(pseudonym('carol@example.com'));
      expect(lines.join('\n'), format).not.toMatch(/carol/);
    }
  });
});
