/**
 * The dashboard's cookie session, attacked: cookie flags (HttpOnly, SameSite=Strict, Secure behind https), CSRF
 * refused (no token, a wrong token, another session's token, and a real cross-site page in Chromium), bearer tokens
 * unchanged, logout ending the server session, another org's data answering 404 to the page's own requests, and the
 * dashboard's security headers.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../ingest/sdk/testing/browser.ts';
import { watch } from '../testing/browser-checks.ts';
import { startTestStack, type TestStack, type TestTenant } from '../testing/stack.ts';
import { createHttpApp } from '../../shared/http/app.ts';
import { createLogger } from '../../shared/logger.ts';
import { dashboardRouter } from '../../api/dashboard/dashboard.routes.ts';
import { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import { startSession } from '../../shared/auth/sessions.ts';
import { insertAlertRow } from '../testing/alert-row.ts';
import { waitReady } from '../../shared/testing/processes.ts';

let stack: TestStack;
let https: TestStack;
let browser: Browser;
let other: TestTenant;

test.before(async () => {
  [stack, https, browser] = await Promise.all([
    startTestStack({ processor: false }),
    startTestStack({ processor: false, env: { PUBLIC_BASE_URL: 'https://friction.example' } }),
    launchChromium(),
  ]);
  other = await stack.newTenant();
});
test.after.always(async () => {
  await browser?.close();
  await stack?.stop();
  await https?.stop();
});

async function insertAlert(s: TestStack, siteId: string): Promise<string> {
  return insertAlertRow(s.infra.database.db, siteId, {
    rule_name: 'spike',
    score_before: 10,
    score_after: 60,
  });
}

/** Signs in for a cookie session: the Set-Cookie lines and a Cookie header carrying them. */
/** The alert's status as stored. */
async function alertStatus(s: TestStack, id: string): Promise<string> {
  return (
    await s.infra.database.db.selectFrom('alerts').select('status').where('id', '=', id).executeTakeFirstOrThrow()
  ).status;
}

async function cookieLogin(
  s: TestStack,
  t: TestTenant,
): Promise<{ setCookie: string[]; cookie: string; csrf: string }> {
  const r = await fetch(`${s.baseUrl}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: t.owner.email, password: t.owner.password, session: 'cookie' }),
  });
  if (r.status !== 200) throw new Error(`login ${r.status}`);
  const setCookie = r.headers.getSetCookie();
  const cookie = setCookie.map((c) => c.split(';')[0]).join('; ');
  const me = await fetch(`${s.baseUrl}/v1/auth/session`, { headers: { cookie } }).then(
    (x) => x.json() as Promise<{ data: { csrf_token: string } }>,
  );
  return { setCookie, cookie, csrf: me.data.csrf_token };
}

const send = (s: TestStack, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  fetch(`${s.baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

test('the session cookie is HttpOnly, SameSite=Strict and path-wide; Secure when the public URL is https', async (t) => {
  const plain = await cookieLogin(stack, stack.tenant);
  const session = plain.setCookie.find((c) => c.startsWith('friction_session='))!;
  t.regex(session, /; HttpOnly/);
  t.regex(session, /; SameSite=Strict/);
  t.regex(session, /; Path=\//);
  t.notRegex(session, /Secure/);
  t.regex(
    plain.setCookie.find((c) => c.startsWith('friction_signed_in='))!,
    /^friction_signed_in=1;/,
    'the readable hint holds no secret',
  );
  t.notRegex(plain.setCookie.find((c) => c.startsWith('friction_signed_in='))!, /HttpOnly/);
  const secure = await cookieLogin(https, https.tenant);
  for (const c of secure.setCookie) t.regex(c, /; Secure/);
  // A bearer login sets no cookie: API clients are unchanged.
  const bearer = await send(
    stack,
    'POST',
    '/v1/auth/login',
    {},
    { email: stack.tenant.owner.email, password: stack.tenant.owner.password },
  );
  t.deepEqual(bearer.headers.getSetCookie(), []);
  t.truthy((await bearer.json()).data.token);
});

test("an unsafe request the cookie authenticates needs its own session's CSRF token; bearer requests need none", async (t) => {
  const a = await cookieLogin(stack, stack.tenant);
  const b = await cookieLogin(stack, stack.tenant);
  const alert = await insertAlert(stack, stack.tenant.siteId);
  const path = `/v1/manage/alerts/${alert}`;
  const none = await send(stack, 'PATCH', path, { cookie: a.cookie }, { status: 'investigating' });
  t.is(none.status, 403);
  t.is((await none.json()).error.code, 'forbidden');
  t.is(
    (
      await send(
        stack,
        'PATCH',
        path,
        { cookie: a.cookie, 'x-csrf-token': 'x'.repeat(43) },
        { status: 'investigating' },
      )
    ).status,
    403,
  );
  t.not(a.csrf, b.csrf);
  t.is(
    (await send(stack, 'PATCH', path, { cookie: a.cookie, 'x-csrf-token': b.csrf }, { status: 'investigating' }))
      .status,
    403,
    "another session's token",
  );
  t.is(
    (await send(stack, 'POST', '/v1/auth/logout', { cookie: a.cookie }, {})).status,
    403,
    'logout is an unsafe method too',
  );
  t.is(await alertStatus(stack, alert), 'fired');
  t.is(
    (await send(stack, 'PATCH', path, { cookie: a.cookie, 'x-csrf-token': a.csrf }, { status: 'acknowledged' })).status,
    200,
  );
  // Reads need no token; a bearer token needs none for writes either (a header cannot be forged cross-site).
  t.is((await send(stack, 'GET', `/v1/query/alerts?site_id=${stack.tenant.siteId}`, { cookie: a.cookie })).status, 200);
  t.is(
    (
      await send(
        stack,
        'PATCH',
        path,
        { authorization: `Bearer ${stack.tenant.owner.token}` },
        { status: 'investigating' },
      )
    ).status,
    200,
  );
  t.is(
    (await send(stack, 'PATCH', path, { authorization: `Bearer ${stack.tenant.secretKey}` }, { status: 'resolved' }))
      .status,
    200,
  );
  t.is(
    (
      await fetch(`${stack.baseUrl}/v1/auth/session`, {
        headers: { authorization: `Bearer ${stack.tenant.owner.token}` },
      }).then((r) => r.json())
    ).data.csrf_token,
    null,
  );
});

test("a page on another site cannot act with the signed-in dashboard's cookie (Chromium)", async (t) => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${stack.baseUrl}/`);
  await page.getByLabel('Email').fill(stack.tenant.owner.email);
  await page.getByLabel('Password').fill(stack.tenant.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  const alert = await insertAlert(stack, stack.tenant.siteId);
  // The attacker's page: another origin (localhost is another site than 127.0.0.1) posting a form and a no-cors fetch.
  const target = stack.baseUrl;
  const evil = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><body>
      <form id="f" method="POST" action="${target}/v1/auth/logout" enctype="text/plain"><input name='{"a":"' value='"}'></form>
      <script>
        fetch('${target}/v1/manage/alerts/${alert}', { method: 'PATCH', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{"status":"resolved"}' })
          .catch(() => {}).finally(() => { document.title = 'sent'; document.getElementById('f').submit(); });
      </script></body>`);
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  const attacker = await ctx.newPage();
  await attacker.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
  await attacker.waitForURL(/\/v1\/auth\/logout/);
  t.is(await alertStatus(stack, alert), 'fired');
  // Still signed in: the forged logout ended nothing.
  const still = await page.evaluate(() => fetch('/v1/auth/session').then((r) => r.status));
  t.is(still, 200);
  await ctx.close();
  await new Promise((r) => evil.close(r));
});

test("logout ends the server session: the cookie's token is refused afterwards, even if kept", async (t) => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(`${stack.baseUrl}/`);
  await page.getByLabel('Email').fill(stack.tenant.owner.email);
  await page.getByLabel('Password').fill(stack.tenant.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  const kept = (await ctx.cookies()).find((c) => c.name === 'friction_session')!;
  t.true(kept.httpOnly);
  t.is(kept.sameSite, 'Strict');
  t.is(
    await page.evaluate(() => document.cookie.includes('friction_session')),
    false,
    'scripts cannot read the session cookie',
  );
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  t.falsy((await ctx.cookies()).find((c) => c.name === 'friction_session' && c.value));
  const replay = await fetch(`${stack.baseUrl}/v1/auth/session`, {
    headers: { cookie: `friction_session=${kept.value}` },
  });
  t.is(replay.status, 401);
  t.deepEqual(w.problems, []);
  await ctx.close();
});

test("another org's data answers 404 to the dashboard's own requests", async (t) => {
  const theirs = await insertAlert(stack, stack.tenant.siteId);
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(`${stack.baseUrl}/`);
  await page.getByLabel('Email').fill(other.owner.email);
  await page.getByLabel('Password').fill(other.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  // A deep link naming the first org's site: the page falls back to the signed-in org's own site.
  const asked: string[] = [];
  page.on('request', (r) => asked.push(r.url()));
  await page.goto(`${stack.baseUrl}/#/alerts?site=${stack.tenant.siteId}`);
  await page.getByRole('heading', { name: 'Alerts' }).waitFor();
  await page.getByText(/No alert has fired/).waitFor();
  t.false(
    asked.some((u) => u.includes(stack.tenant.siteId)),
    'the page never asks for a site it does not have',
  );
  t.deepEqual(w.problems, []);
  // The same requests the page makes, with the first org's ids: 404, as for ids that do not exist.
  const answers = await page.evaluate(
    async ({ site, alert }) => {
      const me = await fetch('/v1/auth/session').then((r) => r.json());
      const csrf = me.data.csrf_token as string;
      const statuses: number[] = [];
      for (const u of [
        `/v1/query/scores?site_id=${site}`,
        `/v1/query/alerts/${alert}?site_id=${site}`,
        `/v1/manage/keys?site_id=${site}`,
      ])
        statuses.push((await fetch(u)).status);
      statuses.push(
        (
          await fetch(`/v1/manage/alerts/${alert}`, {
            method: 'PATCH',
            headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
            body: '{"status":"resolved"}',
          })
        ).status,
      );
      return statuses;
    },
    { site: stack.tenant.siteId, alert: theirs },
  );
  t.deepEqual(answers, [404, 404, 404, 404]);
  t.is(await alertStatus(stack, theirs), 'fired');
  await ctx.close();
});

test('the dashboard answers with a strict CSP and the OWASP secure headers; index never cached, assets immutable', async (t) => {
  // The index answers 503 while the dashboard is still building (a busy machine can take longer than a request waits).
  const r = await waitReady(`${stack.baseUrl}/`);
  const csp = r.headers.get('content-security-policy')!;
  t.is(
    csp,
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  );
  t.is(r.headers.get('cache-control'), 'no-store');
  t.is(r.headers.get('x-content-type-options'), 'nosniff');
  t.is(r.headers.get('x-frame-options'), 'DENY');
  t.is(r.headers.get('referrer-policy'), 'no-referrer');
  t.is(r.headers.get('cross-origin-opener-policy'), 'same-origin');
  t.is(r.headers.get('cross-origin-resource-policy'), 'same-origin');
  t.regex(r.headers.get('permissions-policy')!, /camera=\(\)/);
  t.is(r.headers.get('strict-transport-security'), null, 'no HSTS over plain http');
  const html = await r.text();
  t.notRegex(html, /<script>|<style|style=/, 'no inline script or style');
  const asset = /src="(\/assets\/main-[A-Z0-9]+\.js)"/.exec(html)![1];
  const a = await fetch(`${stack.baseUrl}${asset}`);
  t.is(a.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is(a.headers.get('content-security-policy'), csp);
  t.is((await fetch(`${stack.baseUrl}/assets/main-AAAAAAAA.js`)).status, 404);
  t.regex((await fetch(`${https.baseUrl}/`)).headers.get('strict-transport-security')!, /max-age=31536000/);
});

test("dogfooding: with a key set, the dashboard loads Friction's SDK from the chosen ingest and reports to that site", async (t) => {
  // The dashboard on its own origin, reporting to `stack`'s ingest (another origin) with the tenant's publishable key.
  const log = createLogger('silent');
  const dogfood = { key: stack.tenant.publishableKey, ingestUrl: stack.baseUrl };
  const app = createHttpApp({
    role: 'api',
    log,
    routers: [dashboardRouter({ log, publicBaseUrl: undefined, dogfood })],
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const index = await fetch(`${origin}/`);
    t.regex(
      index.headers.get('content-security-policy')!,
      new RegExp(`script-src 'self' ${stack.baseUrl}; .*connect-src 'self' ${stack.baseUrl};`),
    );
    const page = await browser.newPage();
    const w = watch(page);
    const ingested = page.waitForResponse(
      (r) => r.url() === `${stack.baseUrl}/v1/ingest` && r.request().method() === 'POST',
    );
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForFunction(() => 'Friction' in window);
    await page.evaluate(() => (window as unknown as { Friction: { flush(): void } }).Friction.flush());
    const r = await ingested;
    t.is(r.status(), 202);
    t.deepEqual(w.problems, []);
    await page.close();
    // Off by default: no key, no SDK.
    t.notRegex(await (await fetch(`${stack.baseUrl}/`)).text(), /sdk\.js/);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('a cookie whose token is past half its life is renewed with the same session; a bearer token is not', async (t) => {
  const cfg = stack.config;
  const policy = { tokenTtlSec: cfg.JWT_TTL_SECONDS, sessionMaxSec: cfg.SESSION_MAX_SECONDS };
  // A token issued 60% of its life ago.
  const issued = new Date(Date.now() - cfg.JWT_TTL_SECONDS * 600);
  const old = await startSession(
    stack.infra.database.db,
    new InstanceKeys(stack.infra.database.db, cfg),
    { userId: stack.tenant.owner.userId, orgId: stack.tenant.orgId },
    policy,
    issued,
  );
  const viaCookie = await fetch(`${stack.baseUrl}/v1/auth/session`, {
    headers: { cookie: `friction_session=${old.token}` },
  });
  t.is(viaCookie.status, 200);
  const renewed = viaCookie.headers.getSetCookie().find((c) => c.startsWith('friction_session='))!;
  t.truthy(renewed);
  const fresh = renewed.split(';')[0].slice('friction_session='.length);
  t.not(fresh, old.token);
  const claims = JSON.parse(Buffer.from(fresh.split('.')[1], 'base64url').toString()) as { sid: string; exp: number };
  t.is(claims.sid, old.sessionId);
  t.true(claims.exp * 1000 > old.expiresAt.getTime());
  // The renewed cookie works; the same old token as a bearer credential gets no cookie.
  t.is(
    (await fetch(`${stack.baseUrl}/v1/auth/session`, { headers: { cookie: `friction_session=${fresh}` } })).status,
    200,
  );
  const viaHeader = await fetch(`${stack.baseUrl}/v1/auth/session`, {
    headers: { authorization: `Bearer ${old.token}` },
  });
  t.is(viaHeader.status, 200);
  t.deepEqual(viaHeader.headers.getSetCookie(), []);
});

test('create an account in the browser: signed in with the cookie, and told to create a first site', async (t) => {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 800 } });
  const page = await ctx.newPage();
  const w = watch(page);
  await page.goto(`${stack.baseUrl}/#/signup`);
  await page.getByLabel('Email').fill(`new-${crypto.randomUUID().slice(0, 8)}@test.example`);
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByLabel('Organization name').fill('Fresh org');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'No site yet' }).waitFor();
  t.truthy((await ctx.cookies()).find((c) => c.name === 'friction_session' && c.httpOnly));
  t.deepEqual(w.problems, []);
  await ctx.close();
});
