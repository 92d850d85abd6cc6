import { describe, expect, it } from 'vitest';
import { useTestContext } from './support/harness';

// A request body's key the API does not know is refused with 400 naming it, and nothing is
// written: a misspelt option ("recurrence" for "rrule", "digest_time", "expires_at") used to be
// dropped while the rest of the request went through with a 2xx.

const context = useTestContext();

/**
 * Routes whose bodies stay open, and why: the codec server answers the Temporal UI's protocol, and
 * the proxy forwards an OpenAI-compatible body, whose fields it checks against the tenant's
 * policy itself (400 field_not_allowed, test/resources.int.test.ts).
 */
const OPEN_BODIES = [/^\/codec\//, /^\/proxy\//];

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
};

/** Every object schema inside `schema` that admits keys it does not name, by JSON path. */
function openObjects(schema: JsonSchema, path: string, resolve: (ref: string) => JsonSchema, seen = new Set<JsonSchema>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  if (schema.$ref) return openObjects(resolve(schema.$ref), path, resolve, seen);
  const found: string[] = [];
  if (schema.properties) {
    // A free-form map (metadata) declares no properties and is bounded elsewhere; an object that
    // names its fields must refuse the others.
    if (schema.additionalProperties !== false) found.push(path || '/');
    for (const [key, child] of Object.entries(schema.properties)) found.push(...openObjects(child, `${path}/${key}`, resolve, seen));
  }
  if (schema.items) found.push(...openObjects(schema.items, `${path}/*`, resolve, seen));
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) found.push(...openObjects(branch, path, resolve, seen));
  return found;
}

describe('request bodies refuse keys they do not know', () => {
  it('every JSON body of the OpenAPI document names its keys and refuses others, at every depth', async () => {
    const doc = (await (await fetch(`${context.ctx.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: JsonSchema }> } }>>;
      components?: { schemas?: Record<string, JsonSchema> };
    };
    const resolve = (ref: string): JsonSchema => doc.components?.schemas?.[ref.replace('#/components/schemas/', '')] ?? {};
    const open: string[] = [];
    let bodies = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (OPEN_BODIES.some((p) => p.test(path))) continue;
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        if (!schema) continue;
        bodies++;
        for (const where of openObjects(schema, '', resolve)) open.push(`${method.toUpperCase()} ${path} ${where}`);
      }
    }
    // The document must list the bodies at all, or the walk above proves nothing.
    expect(bodies).toBeGreaterThanOrEqual(10);
    expect(open).toEqual([]);
  });

  const user = () => `${context.ctx.prefix}-typo`;

  it('a reminder with a misspelt recurrence is refused, and no one-off reminder is left in its place', async () => {
    const res = await context.ctx.call('POST', `/v1/users/${user()}/reminders`, { text: 'drink water', dueAt: '2030-01-01T08:00:00Z', recurrence: 'FREQ=DAILY' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(JSON.stringify(res.body.error.details)).toContain('recurrence');
    const list = await context.ctx.call('GET', `/v1/users/${user()}/reminders`);
    expect(list.status).toBe(200);
    expect(list.body.reminders).toEqual([]);
  });

  it('settings with one misspelt key change nothing, not even the keys spelt right', async () => {
    const before = await context.ctx.call('GET', `/v1/users/${user()}/settings`);
    expect(before.status).toBe(200);
    for (const body of [
      { digestTime: '07:30', digest_time: '07:30' },
      { proactive: { enabled: false, quiet_hours: { start: '23:00', end: '07:00' } } },
      { proactive: { quietHours: { start: '23:00', end: '07:00', days: 'weekdays' } } },
    ]) {
      const res = await context.ctx.call('PUT', `/v1/users/${user()}/settings`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    const after = await context.ctx.call('GET', `/v1/users/${user()}/settings`);
    expect(after.body).toEqual(before.body);
  });

  it('a batch of messages with one unknown key in one message stores none of them', async () => {
    const conversation = 'typo-batch';
    const messages = [
      { id: 'm1', role: 'user', content: 'I started learning the cello last month' },
      { id: 'm2', role: 'assistant', content: 'How is it going?', timestamp: '2030-01-01T00:00:00Z' },
    ];
    const res = await context.ctx.call('POST', `/v1/users/${user()}/conversations/${conversation}/messages`, { messages });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain('timestamp');
    // Had m1 been stored, the same id with other content would be refused as a reused id.
    const again = await context.ctx.call('POST', `/v1/users/${user()}/conversations/${conversation}/messages`, { id: 'm1', role: 'user', content: 'something else entirely' });
    expect(again.status).toBe(202);
    expect(again.body.accepted).toEqual(['m1']);
  });

  it('memory writes, recall and conversation search name the key they refuse', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', `/v1/users/${user()}/memories`, { text: 'I like oolong tea', expires_at: '2030-01-01T00:00:00Z' }, 'expires_at'],
      ['POST', `/v1/users/${user()}/recall`, { query: 'tea', top_k: 3 }, 'top_k'],
      ['POST', `/v1/users/${user()}/conversations/search`, { query: 'tea', limit: 3 }, 'limit'],
    ];
    for (const [method, path, body, key] of cases) {
      const res = await context.ctx.call(method, path, body);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(JSON.stringify(res.body.error.details)).toContain(key);
    }
    const memories = await context.ctx.call('GET', `/v1/users/${user()}/memories`);
    expect(memories.body.memories.map((m: { text: string }) => m.text)).not.toContain('I like oolong tea');
  });
});
