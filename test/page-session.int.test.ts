import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageTokens } from '../src/api/page-session';
import { ServiceSecrets } from '../src/security/secrets';
import { createTestContext, OTHER_TENANT_KEY, TEST_KEY, type TestContext } from './support/harness';
import { openSse } from './support/sse';

// The memory page's per-user sign-in against the real API and PostgreSQL: a tenant mints a
// one-time code for one user, the code becomes an HttpOnly cookie, and that cookie opens exactly
// that user's page routes — nothing of another user, another tenant, or the rest of the API.

let ctx: TestContext;
let alice: string;
let bob: string;
let carol: string; // tenant B's user
let aliceReminder: string;
let forge: PageTokens;

beforeAll(async () => {
  ctx = await createTestContext();
  // "@" in the id: the cookie's Path must be written the way the page writes the URL.
  alice = `${ctx.prefix}-alice@example.com`;
  bob = `${ctx.prefix}-bob`;
  carol = `${ctx.prefix}-carol`;
  const due = new Date(Date.now() + 3600_000).toISOString();
  const r = await ctx.call('POST', `/v1/users/${enc(alice)}/reminders`, { text: 'alice: call the dentist', dueAt: due });
  expect(r.status).toBe(201);
  aliceReminder = r.body.id;
  expect((await ctx.call('POST', `/v1/users/${bob}/reminders`, { text: 'bob: secret plan', dueAt: due })).status).toBe(201);
  expect((await ctx.call('POST', `/v1/users/${carol}/reminders`, { text: 'carol: other tenant', dueAt: due }, { authorization: `Bearer ${OTHER_TENANT_KEY}` })).status).toBe(201);
  // The service's own key, to make tokens the clock has already passed (or will pass in 2 s).
  forge = new PageTokens(new ServiceSecrets(ctx.runtime.config.secretKey).key('page-token'), { sessionTtlSeconds: 2, codeTtlSeconds: 60 });
});
afterAll(async () => {
  await ctx?.close();
});

const enc = encodeURIComponent;

async function mint(user: string, key?: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${ctx.baseUrl}/v1/users/${enc(user)}/page-token`, { method: 'POST', headers: { authorization: `Bearer ${key ?? TEST_KEY}` } });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function exchange(code: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; setCookie: string | null }> {
  const res = await fetch(`${ctx.baseUrl}/app/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ code }) });
  return { status: res.status, body: await res.json().catch(() => undefined), setCookie: res.headers.get('set-cookie') };
}

/** Signs in as `user` through the real flow and returns the Cookie header the browser would send. */
async function signIn(user: string): Promise<string> {
  const m = await mint(user);
  expect(m.status).toBe(201);
  const x = await exchange(m.body.code);
  expect(x.status).toBe(200);
  return x.setCookie!.split(';')[0]!;
}

/** A request with a cookie and no API key, with the header the page's script sends (unless `headers` replaces it). */
async function withCookie(cookie: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = { 'x-memory-page': '1' }): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const res = await fetch(`${ctx.baseUrl}${path}`, {
    method,
    headers: { ...(cookie ? { cookie } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

describe('memory page sign-in', () => {
  it('mints a one-time code with the API key and trades it for a cookie limited to that user', async () => {
    const m = await mint(alice);
    expect(m.status).toBe(201);
    expect(m.headers.get('cache-control')).toBe('no-store');
    expect(m.body.url).toBe(`/app#code=${m.body.code}`);
    expect(m.body.sessionTtlSeconds).toBe(900);
    const codeLife = new Date(m.body.expiresAt).getTime() - Date.now();
    expect(codeLife).toBeGreaterThan(290_000);
    expect(codeLife).toBeLessThanOrEqual(300_000);
    expect(m.body.code).not.toContain(TEST_KEY);

    const x = await exchange(m.body.code);
    expect(x.status).toBe(200);
    expect(x.body.userId).toBe(alice);
    expect(new Date(x.body.expiresAt).getTime() - Date.now()).toBeGreaterThan(890_000);
    const attrs = x.setCookie!.split(';').map((s) => s.trim());
    expect(attrs[0]).toMatch(/^jm_page=ps1\./);
    expect(attrs).toEqual(expect.arrayContaining([`Path=/v1/users/${enc(alice)}`, 'HttpOnly', 'SameSite=Strict', 'Max-Age=900']));
    expect(attrs).not.toContain('Secure'); // plain http here; see the https case below
    const cookie = attrs[0]!;

    // The page's reads and actions, with nothing but the cookie.
    const list = await withCookie(cookie, 'GET', `/v1/users/${enc(alice)}/reminders`);
    expect(list.status).toBe(200);
    expect(list.body.reminders.map((r: { text: string }) => r.text)).toEqual(['alice: call the dentist']);
    expect(list.headers.get('cache-control')).toBe('no-store');
    expect(list.headers.get('x-content-type-options')).toBe('nosniff');
    for (const path of ['notifications', 'settings', 'digests?days=1', 'memories?status=active']) {
      expect((await withCookie(cookie, 'GET', `/v1/users/${enc(alice)}/${path}`)).status, path).toBe(200);
    }
    // 200 once the list shows the workflow's new state, 202 if that takes longer than the API waits.
    expect([200, 202]).toContain((await withCookie(cookie, 'POST', `/v1/users/${enc(alice)}/reminders/${aliceReminder}/snooze`, { seconds: 600 })).status);
    const created = await withCookie(cookie, 'POST', `/v1/users/${enc(alice)}/reminders`, { text: 'made on the page', dueAt: new Date(Date.now() + 7200_000).toISOString() });
    expect(created.status).toBe(201);
    expect([200, 202]).toContain((await withCookie(cookie, 'POST', `/v1/users/${enc(alice)}/reminders/${created.body.id}/dismiss`, {})).status);

    const sse = await openSse(`${ctx.baseUrl}/v1/users/${enc(alice)}/events`, undefined, { cookie });
    expect((await sse.next((e) => e.event === 'ready')).data.userId).toBe(alice);
    sse.close();
  });

  it("refuses the cookie for another user of the tenant and for another tenant's user, with no data", async () => {
    const cookie = await signIn(alice);
    for (const user of [bob, carol]) {
      for (const path of ['reminders', 'notifications', 'settings', 'memories', 'events']) {
        const r = await withCookie(cookie, 'GET', `/v1/users/${user}/${path}`);
        expect(r.status, `${user}/${path}`).toBe(403);
        expect(r.text).not.toMatch(/secret plan|other tenant/);
        expect(r.body.error.code).toBe('forbidden');
      }
    }
    // Tenant A's key cannot sign anyone into tenant B's carol: today it gets 403 (the id belongs to
    // B); with per-tenant subjects it would be A's own, empty "carol" — never B's data.
    const cross = await mint(carol);
    if (cross.status === 201) {
      const crossCookie = (await exchange(cross.body.code)).setCookie!.split(';')[0]!;
      expect((await withCookie(crossCookie, 'GET', `/v1/users/${carol}/reminders`)).text).not.toContain('other tenant');
    } else expect(cross.status).toBe(403);
    // Tenant B signs its own user in, and that cookie is no good for tenant A's users.
    const m = await mint(carol, OTHER_TENANT_KEY);
    expect(m.status).toBe(201);
    const carolCookie = (await exchange(m.body.code)).setCookie!.split(';')[0]!;
    expect((await withCookie(carolCookie, 'GET', `/v1/users/${carol}/reminders`)).body.reminders[0].text).toBe('carol: other tenant');
    expect((await withCookie(carolCookie, 'GET', `/v1/users/${enc(alice)}/reminders`)).status).toBe(403);
  });

  it('refuses the cookie on every route the page does not call', async () => {
    const cookie = await signIn(alice);
    const u = `/v1/users/${enc(alice)}`;
    const attempts: [string, string, unknown?][] = [
      ['POST', `${u}/page-token`], // a session cannot mint itself a new code
      ['POST', `${u}/memories`, { text: 'injected', type: 'fact' }],
      ['GET', `${u}/memories/${aliceReminder}`],
      ['DELETE', `${u}/memories/${aliceReminder}`],
      ['POST', `${u}/recall`, { query: 'dentist' }],
      ['POST', `${u}/conversations/c1/messages`, { messages: [{ id: 'm1', role: 'user', content: 'hi', at: new Date().toISOString() }] }],
      ['GET', `${u}/conversations/search?q=dentist`],
      ['PUT', `${u}/settings`, { timezone: 'Asia/Shanghai' }],
      ['GET', `${u}/reminders/${aliceReminder}`],
      ['DELETE', `${u}/reminders/${aliceReminder}`],
      ['PATCH', `${u}/reminders/${aliceReminder}`, { dueAt: new Date(Date.now() + 86400_000).toISOString() }],
      ['GET', `${u}/export`],
      ['DELETE', u],
    ];
    for (const [method, path, body] of attempts) {
      const r = await withCookie(cookie, method, path, body);
      // 401: the route wants an API key (routes another branch adds, like export, are refused the same way).
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.text).not.toContain('dentist');
    }
    // And nothing was written through them.
    expect((await ctx.call('GET', `${u}/memories`)).body.total).toBe(0);
    expect((await ctx.call('GET', `${u}/reminders/${aliceReminder}`)).body.status).not.toBe('cancelled');
  });

  it('refuses page routes with no cookie, a tampered one, an expired one, or a code in its place', async () => {
    const path = `/v1/users/${enc(alice)}/reminders`;
    const none = await withCookie(undefined, 'GET', path);
    expect(none.status).toBe(401);
    expect(none.text).not.toContain('dentist');

    const good = (await signIn(alice)).slice('jm_page='.length);
    const [prefix, payload, sig] = good.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const asBob = Buffer.from(JSON.stringify({ ...claims, u: bob })).toString('base64url');
    const flipped = `${sig![0] === 'A' ? 'B' : 'A'}${sig!.slice(1)}`;
    for (const bad of [`${prefix}.${asBob}.${sig}`, `${prefix}.${payload}.${flipped}`, `${prefix}.${payload}`, 'garbage']) {
      const r = await withCookie(`jm_page=${bad}`, 'GET', path);
      expect(r.status, bad).toBe(401);
      expect(r.text).not.toContain('dentist');
    }
    // Signed with the service's key, a session for bob does open bob's page: what was refused above is the tampering.
    const bobSession = forge.issue('session', { tenantId: 'tenant-a', userId: bob }, new Date()).token;
    expect((await withCookie(`jm_page=${bobSession}`, 'GET', `/v1/users/${bob}/reminders`)).status).toBe(200);

    const expired = forge.issue('session', { tenantId: 'tenant-a', userId: alice }, new Date(Date.now() - 3600_000)).token;
    const r = await withCookie(`jm_page=${expired}`, 'GET', path);
    expect(r.status).toBe(401);
    expect(r.body.error.details.reason).toBe('expired');

    // A sign-in code is not a session, even correctly signed and unused.
    const code = (await mint(alice)).body.code;
    expect((await withCookie(`jm_page=${code}`, 'GET', path)).status).toBe(401);
    // … and a session is not a sign-in code.
    expect((await exchange(good)).status).toBe(401);
  });

  it('takes each code once, refuses expired, tampered and cross-site sign-ins', async () => {
    const { code } = (await mint(alice)).body;
    // Another site's page posting the code (login CSRF) is refused and does not use the code up.
    const cross = await exchange(code, { 'sec-fetch-site': 'cross-site' });
    expect(cross.status).toBe(403);
    expect(cross.setCookie).toBeNull();
    const textPlain = await fetch(`${ctx.baseUrl}/app/session`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ code }) });
    // What a cross-site <form enctype="text/plain"> can send is not a JSON body: refused before the code is read.
    expect([400, 415]).toContain(textPlain.status);
    expect(textPlain.headers.get('set-cookie')).toBeNull();

    // Two tabs racing with the same code: one session.
    const [a, b] = await Promise.all([exchange(code, { 'sec-fetch-site': 'same-origin' }), exchange(code)]);
    expect([a.status, b.status].sort()).toEqual([200, 401]);
    const replay = await exchange(code);
    expect(replay.status).toBe(401);
    expect(replay.body.error.details.reason).toBe('used');
    expect(replay.setCookie).toBeNull();

    const old = forge.issue('code', { tenantId: 'tenant-a', userId: alice }, new Date(Date.now() - 120_000)).token;
    const expired = await exchange(old);
    expect(expired.status).toBe(401);
    expect(expired.body.error.details.reason).toBe('expired');

    const fresh = (await mint(alice)).body.code as string;
    const [prefix, payload, sig] = fresh.split('.');
    const asBob = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), u: bob })).toString('base64url');
    for (const bad of [`${prefix}.${asBob}.${sig}`, `${prefix}.${payload}.${sig!.slice(0, -4)}`, fresh.replace(/^pc1/, 'ps1'), '']) {
      const r = await exchange(bad);
      expect(r.status, bad).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.setCookie).toBeNull();
    }
    // The tampered attempts did not use the genuine code up.
    expect((await exchange(fresh)).status).toBe(200);

    // A code signed for a tenant no longer configured opens nothing.
    const ghost = forge.issue('code', { tenantId: 'tenant-gone', userId: alice }, new Date()).token;
    expect((await exchange(ghost)).status).toBe(401);
  });

  it('refuses state-changing page calls that could come from another site (CSRF), and writes nothing', async () => {
    const cookie = await signIn(alice);
    const u = `/v1/users/${enc(alice)}`;
    const due = new Date(Date.now() + 7200_000).toISOString();
    const own = new URL(ctx.baseUrl).host;
    const forged: [string, Record<string, string>][] = [
      ['no page header (a cross-site form, or fetch without a preflight)', {}],
      ['page header "0"', { 'x-memory-page': '0' }],
      ['Sec-Fetch-Site cross-site', { 'x-memory-page': '1', 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site (a sibling subdomain)', { 'x-memory-page': '1', 'sec-fetch-site': 'same-site' }],
      ['Origin of another site', { 'x-memory-page': '1', origin: 'https://evil.example' }],
      ['Origin of another port', { 'x-memory-page': '1', origin: 'http://127.0.0.1:1' }],
      ['Origin null', { 'x-memory-page': '1', origin: 'null' }],
    ];
    const calls: [string, string, unknown?][] = [
      ['POST', `${u}/reminders`, { text: 'csrf: forged reminder', dueAt: due }],
      ['POST', `${u}/reminders/${aliceReminder}/snooze`, { seconds: 600 }],
      ['POST', `${u}/notifications/read`, { ids: ['00000000-0000-4000-8000-000000000000'] }],
      ['POST', `${u}/digests`, {}],
      ['DELETE', `${u}/page-session`],
    ];
    for (const [what, headers] of forged) {
      for (const [method, path, body] of calls) {
        const r = await withCookie(cookie, method, path, body, headers);
        expect(r.status, `${what}: ${method} ${path}`).toBe(403);
        expect(r.body.error, `${what}: ${method} ${path}`).toMatchObject({ code: 'forbidden', details: { reason: 'cross_site' } });
      }
    }
    const reminders = await ctx.call('GET', `${u}/reminders`);
    expect(JSON.stringify(reminders.body)).not.toContain('csrf: forged reminder');
    // The session was not signed out by the forged DELETE; reads need no header; the page's own calls pass.
    expect((await withCookie(cookie, 'GET', `${u}/reminders`, undefined, {})).status).toBe(200);
    const real = await withCookie(cookie, 'POST', `${u}/reminders`, { text: 'made on the page, same origin', dueAt: due }, { 'x-memory-page': '1', 'sec-fetch-site': 'same-origin', origin: `http://${own}` });
    expect(real.status, real.text).toBe(201);
    // Sign-in itself refuses another site's Origin too (login CSRF).
    const { code } = (await mint(alice)).body;
    const x = await exchange(code, { origin: 'https://evil.example' });
    expect(x.status).toBe(403);
    expect(x.body.error.details.reason).toBe('cross_site');
  });

  it('a purge of the user revokes the page sessions and unused sign-in links issued before it', async () => {
    const dave = `${ctx.prefix}-dave@example.com`;
    const u = `/v1/users/${enc(dave)}`;
    const cookie = await signIn(dave);
    expect((await withCookie(cookie, 'GET', `${u}/reminders`)).status).toBe(200);
    const unused = (await mint(dave)).body.code as string;
    const purge = await ctx.call('DELETE', `${u}?wait=true`);
    expect(purge.status, JSON.stringify(purge.body)).toBe(200);
    const after = await withCookie(cookie, 'GET', `${u}/reminders`);
    expect(after.status).toBe(401);
    expect(after.body.error.details.reason).toBe('purged');
    expect((await withCookie(cookie, 'POST', `${u}/reminders`, { text: 'after the purge', dueAt: new Date(Date.now() + 3600_000).toISOString() })).status).toBe(401);
    const late = await exchange(unused);
    expect(late.status).toBe(401);
    expect(late.body.error.details.reason).toBe('purged');
    // A link minted after the purge is a new life of the id, and opens it.
    const fresh = await signIn(dave);
    expect((await withCookie(fresh, 'GET', `${u}/reminders`)).status).toBe(200);
  });

  it('marks the cookie Secure behind https, and sign-out ends the session on the server', async () => {
    const { code } = (await mint(alice)).body;
    const x = await exchange(code, { 'x-forwarded-proto': 'https' });
    expect(x.setCookie).toMatch(/; Secure/);
    const cookie = x.setCookie!.split(';')[0]!;
    const out = await withCookie(cookie, 'DELETE', `/v1/users/${enc(alice)}/page-session`);
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^jm_page=; Path=\/v1\/users\/[^;]+; Max-Age=0/);
    const after = await withCookie(cookie, 'GET', `/v1/users/${enc(alice)}/reminders`);
    expect(after.status).toBe(401);
    expect(after.body.error.details.reason).toBe('signed_out');
  });

  it('ends the event stream when the page session expires', async () => {
    // Signed with the service key for a 2-second session (the shortest configurable one is 60 s).
    const short = forge.issue('session', { tenantId: 'tenant-a', userId: alice }, new Date()).token;
    const sse = await openSse(`${ctx.baseUrl}/v1/users/${enc(alice)}/events`, undefined, { cookie: `jm_page=${short}` });
    await sse.next((e) => e.event === 'ready');
    const started = Date.now();
    await sse.ended;
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await withCookie(`jm_page=${short}`, 'GET', `/v1/users/${enc(alice)}/events`)).status).toBe(401);
  });

  it('serves the page under a strict CSP, never framed, with no inline script or style', async () => {
    for (const path of ['/app', '/app/app.js', '/app/app.css']) {
      const res = await fetch(`${ctx.baseUrl}${path}`);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const html = await (await fetch(`${ctx.baseUrl}/app`)).text();
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\bsrc="\/app\//);
    expect(html).not.toMatch(/<script\b[^>]*>[^<\s]/);
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/type="password"|data-i18n="apiKey"/); // no key is ever asked for
  });
});
