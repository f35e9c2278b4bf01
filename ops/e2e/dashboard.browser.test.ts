/**
 * The dashboard in Debian's Chromium against a seeded Friction (demo traffic, two deploys, a fired alert, screenshots
 * of a local shop): sign in, walk every screen at 1280 and 390 px, triage (and see a refused triage rolled back),
 * acknowledge an alert, switch the heatmap device, copy the SDK snippet, create and revoke a key, build Explorer
 * queries (their results equal what POST /v1/query/explore answers, a refused one names its field). Every page is
 * watched for console errors, CSP violations, failed requests and serious or critical axe violations. Screenshots
 * go to .artifacts/dashboard/ (gitignored); the overview's first meaningful paint is printed.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../ingest/sdk/testing/browser.ts';
import { axeViolations, watch, type Watched } from '../testing/browser-checks.ts';
import { seedDashboard, serveShop, type Seeded } from '../testing/dashboard-seed.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';
import { startReceiver, type Receiver } from '../testing/webhook-receiver.ts';
import { insertAlertRow } from '../testing/alert-row.ts';

const ARTIFACTS = path.join(import.meta.dirname, '..', '..', '.artifacts', 'dashboard');

let stack: TestStack;
let shop: Awaited<ReturnType<typeof serveShop>>;
let seeded: Seeded;
let browser: Browser;
let ctx: BrowserContext;
let receiver: Receiver;

test.before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  shop = await serveShop();
  receiver = await startReceiver(() => ({ status: 200 }));
  [stack, browser] = await Promise.all([
    startTestStack({
      dispatcher: true,
      env: {
        OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
        SCREENSHOT_ALLOW_PRIVATE_NETWORKS: 'true',
        SCREENSHOT_TIMEOUT_MS: '30000',
      },
    }),
    launchChromium(),
  ]);
  seeded = await seedDashboard(stack, { siteUrl: shop.url });
  // Captures run in the background: asked for once here, so the page view shows them.
  const sec = { authorization: `Bearer ${stack.tenant.secretKey}` };
  for (const device of ['desktop', 'mobile']) {
    await eventually(
      async () => {
        const r = await getJson(
          `${stack.baseUrl}/v1/query/page-screenshot?site_id=${stack.tenant.siteId}&page=/checkout&device=${device}`,
          sec,
        );
        return r.body.data?.screenshot ? true : undefined;
      },
      { timeoutMs: 60_000, stepMs: 500 },
    );
  }
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.baseUrl });
});

test.after.always(async () => {
  await browser?.close();
  await stack?.stop();
  await shop?.close();
  await receiver?.close();
});

async function signIn(page: Page): Promise<void> {
  await page.goto(`${stack.baseUrl}/`);
  await page.getByLabel('Email').fill(stack.tenant.owner.email);
  await page.getByLabel('Password').fill(stack.tenant.owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** Opens a screen, waits until nothing is loading, checks it with axe and saves its screenshot. */
async function visit(
  t: { log(...a: unknown[]): void },
  page: Page,
  w: Watched,
  hash: string,
  name: string,
  ready: (p: Page) => Promise<unknown>,
): Promise<void> {
  await page.goto(`${stack.baseUrl}/#/${hash}`);
  await ready(page);
  await page.waitForFunction(() => !document.querySelector('[role=status]')?.textContent?.startsWith('Loading'));
  const width = page.viewportSize()!.width;
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  const axe = await axeViolations(page);
  if (axe.length) w.problems.push(...axe.map((v) => `${name} @${width}: ${v}`));
  t.log(`${name} @${width}px ok`);
}

/**
 * A test on a page of its own (the signed-in context's), watched: it fails on any console error, CSP violation, failed
 * request or axe violation seen on it.
 */
const onPage = test.macro(async (t, body: (t: ExecutionContext, page: Page, w: Watched) => Promise<void>) => {
  const page = await ctx.newPage();
  const w = watch(page);
  await body(t, page, w);
  t.deepEqual(w.problems, []);
  await page.close();
});

const siteQ = () => `site=${stack.tenant.siteId}`;

const MEASURE_BY_PAGE = {
  window_days: 30,
  filters: [],
  output: { mode: 'measure', metric: 'count', group_by: 'page' },
};
const exploreQ = (q: unknown) => `explore?${siteQ()}&environment=production&q=${encodeURIComponent(JSON.stringify(q))}`;
/** What the API answers for an Explore query, read with the site's secret key (not the dashboard's cookie). */
async function explore(q: unknown): Promise<{ status: number; body: any }> {
  return postJson(`${stack.baseUrl}/v1/query/explore?site_id=${stack.tenant.siteId}&environment=production`, q, {
    authorization: `Bearer ${stack.tenant.secretKey}`,
  });
}

test.serial(
  'sign in, and the overview paints its score: time to first meaningful paint',
  onPage,
  async (t, page, w) => {
    await signIn(page);
    // A fresh load of the overview with the session cookie: the paint of its score heading, as the browser records it.
    await page.goto('about:blank');
    await page.goto(`${stack.baseUrl}/#/overview?${siteQ()}`);
    await page.getByTestId('overall-score').waitFor();
    const fmp = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          new PerformanceObserver((list) => {
            const e = list
              .getEntries()
              .find((x) => (x as PerformanceEntry & { identifier?: string }).identifier === 'overview-score') as
              | (PerformanceEntry & { renderTime: number })
              | undefined;
            if (e) resolve(e.renderTime);
          }).observe({ type: 'element', buffered: true });
        }),
    );
    t.log(
      `overview first meaningful paint: ${fmp.toFixed(0)} ms after navigation start (demo data, ${seeded.pages.length} pages)`,
    );
    console.log(`dashboard: overview first meaningful paint ${fmp.toFixed(0)} ms`);
    t.true(fmp > 0);
  },
);

for (const width of [1280, 390]) {
  test.serial(
    `every screen at ${width} px: no console error, failed request, CSP violation or serious axe violation`,
    async (t) => {
      const page = await ctx.newPage();
      await page.setViewportSize({ width, height: 900 });
      const w = watch(page);
      page.on('dialog', (d) => void d.accept());
      const issue = seeded.issueIds[0];
      const detail = await getJson(`${stack.baseUrl}/v1/query/issues/${issue}?site_id=${stack.tenant.siteId}`, {
        authorization: `Bearer ${stack.tenant.secretKey}`,
      });
      const session = detail.body.data.sessions[0]?.id as string;
      const h1 = (name: string | RegExp) => (p: Page) => p.getByRole('heading', { level: 1, name }).waitFor();
      await visit(t, page, w, `overview?${siteQ()}`, 'overview', async (p) => p.getByTestId('overall-score').waitFor());
      await visit(t, page, w, `issues?${siteQ()}`, 'issues', async (p) => p.getByTestId('issue-row').first().waitFor());
      await visit(t, page, w, `issue/${issue}?${siteQ()}`, 'issue', h1(/./));
      // A deep link survives a reload.
      await page.reload();
      await page.getByRole('heading', { name: 'Hypothesis' }).waitFor();
      if (session)
        await visit(t, page, w, `session/${encodeURIComponent(session)}?${siteQ()}`, 'session', h1('Session timeline'));
      await visit(t, page, w, `page?${siteQ()}&page=%2Fcheckout&selector=%23pay-now`, 'page', async (p) =>
        p.getByRole('img', { name: /Screenshot of \/checkout/ }).waitFor(),
      );
      await visit(t, page, w, `journeys?${siteQ()}`, 'journeys', h1('Friction journeys'));
      await visit(t, page, w, `explore?${siteQ()}`, 'explore-empty', h1('Explorer'));
      await visit(t, page, w, exploreQ(MEASURE_BY_PAGE), 'explore-measure', async (p) =>
        p.getByTestId('explore-group').first().waitFor(),
      );
      await page.reload();
      await page.getByTestId('explore-group').first().waitFor();
      await visit(
        t,
        page,
        w,
        exploreQ({
          window_days: 30,
          filters: [{ field: 'converted', op: 'is', value: false }],
          output: { mode: 'list', limit: 25 },
        }),
        'explore-list',
        async (p) => p.getByTestId('explore-session').first().waitFor(),
      );
      await visit(t, page, w, `deploys?${siteQ()}`, 'deploys', async (p) => p.getByTestId('deploy').nth(1).waitFor());
      await visit(t, page, w, `alerts?${siteQ()}`, 'alerts', async (p) => p.getByTestId('alert').first().waitFor());
      for (const tab of ['sites', 'keys', 'members', 'webhooks', 'integrations', 'rules', 'sdk', 'usage']) {
        await visit(t, page, w, `settings?${siteQ()}&tab=${tab}`, `settings-${tab}`, h1('Settings'));
      }
      // The dark theme (the OS setting) meets the same contrast and accessibility bar.
      await page.emulateMedia({ colorScheme: 'dark' });
      await visit(t, page, w, `overview?${siteQ()}`, 'overview-dark', async (p) =>
        p.getByTestId('overall-score').waitFor(),
      );
      await visit(t, page, w, `issues?${siteQ()}`, 'issues-dark', async (p) =>
        p.getByTestId('issue-row').first().waitFor(),
      );
      await visit(t, page, w, exploreQ(MEASURE_BY_PAGE), 'explore-dark', async (p) =>
        p.getByTestId('explore-group').first().waitFor(),
      );
      await visit(t, page, w, `deploys?${siteQ()}`, 'deploys-dark', async (p) =>
        p.getByTestId('deploy').nth(1).waitFor(),
      );
      t.is(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(16, 19, 23)');
      await page.emulateMedia({ colorScheme: 'light' });
      // The screens before sign-in, in a context without the session cookie.
      const anon = await browser.newContext({ viewport: { width, height: 900 } });
      const out = await anon.newPage();
      const wo = watch(out);
      await visit(t, out, wo, 'signin', 'signin', h1('Sign in'));
      await visit(t, out, wo, 'signup', 'signup', h1('Create account'));
      await visit(t, out, wo, 'accept-invite?token=inv_example', 'accept-invite', h1('Join organization'));
      await visit(t, out, wo, 'verify-email?token=evt_example', 'verify-email', h1('Confirm email'));
      await anon.close();
      t.deepEqual([...w.problems, ...wo.problems], []);
      await page.close();
    },
  );
}

test.serial(
  'Explorer: a measure grouped by page and a filtered list equal what POST /v1/query/explore answers',
  onPage,
  async (t, page, w) => {
    const listQuery = {
      window_days: 30,
      filters: [{ field: 'page', op: 'is', value: '/checkout' }],
      output: { mode: 'list', limit: 20 },
    };
    // The processor may still be writing the demo's last events: compare once two answers in a row agree.
    let last = '';
    await eventually(
      async () => {
        const now = JSON.stringify([
          (await explore(MEASURE_BY_PAGE)).body.data.result,
          (await explore(listQuery)).body.data.result,
        ]);
        const same = now === last;
        last = now;
        return same || undefined;
      },
      { timeoutMs: 30_000, stepMs: 300 },
    );

    await page.goto(`${stack.baseUrl}/#/explore?${siteQ()}`);
    await page.getByTestId('explore-empty').waitFor();
    await page.getByLabel('Window (days, 1-90)').fill('30');
    await page.getByLabel('Measure', { exact: true }).check();
    await page.getByLabel('Metric').selectOption('count');
    await page.getByLabel('Group by').selectOption('page');
    await page.getByRole('button', { name: 'Run query' }).click();
    await page.getByTestId('explore-group').first().waitFor();
    const measure = (await explore(MEASURE_BY_PAGE)).body.data.result;
    t.true(measure.groups.length >= 3, 'the demo traffic has several pages');
    t.is(await page.getByTestId('explore-value').innerText(), String(measure.value));
    const shownGroups = await page
      .getByTestId('explore-group')
      .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent)));
    t.deepEqual(
      shownGroups,
      measure.groups.map((g: { key: string | null; value: number; sessions: number }) => [
        g.key ?? '(none)',
        String(g.value),
        String(g.sessions),
      ]),
    );
    // The query is in the URL, exactly the document the API takes.
    const inUrl = new URLSearchParams(new URL(page.url()).hash.split('?')[1]).get('q');
    t.deepEqual(JSON.parse(inUrl!), MEASURE_BY_PAGE);

    await page.getByLabel('List sessions').check();
    await page.getByLabel('Sessions to list (1-500)').fill('20');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Filter 1 field').selectOption('page');
    await page.getByLabel('Filter 1 operator').selectOption('is');
    await page.getByLabel('Filter 1 value').fill('/checkout');
    await page.keyboard.press('Enter');
    await page.getByTestId('explore-session').first().waitFor();
    const list = (await explore(listQuery)).body.data.result;
    t.true(list.sessions.length > 0);
    const shownSessions = await page
      .getByTestId('explore-session')
      .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td')).map((c) => c.textContent)));
    t.deepEqual(
      shownSessions.map((c) => [c[0], c[3], c[5], c[6], c[7]]),
      list.sessions.map(
        (x: { session_id: string; pages: string[]; converted: boolean; source: string; device: string }) => [
          x.session_id,
          x.pages.join(', '),
          x.converted ? 'yes' : 'no',
          x.source,
          x.device,
        ],
      ),
    );
    for (const c of shownSessions) t.true(c[3]!.includes('/checkout'));

    // A refused query names its field: the server's details path is shown beside the window control.
    w.expectFailure('/v1/query/explore');
    await page.getByLabel('Window (days, 1-90)').fill('500');
    await page.getByRole('button', { name: 'Run query' }).click();
    const refused = await explore({ ...listQuery, window_days: 500 });
    t.is(refused.status, 400);
    t.is(refused.body.error.details[0].path, 'window_days');
    const note = page.getByTestId('field-error');
    await note.waitFor();
    t.regex(await note.innerText(), /^window_days: /);
    t.is(await page.getByLabel('Window (days, 1-90)').getAttribute('aria-invalid'), 'true');

    // A session links to its timeline.
    await page.getByLabel('Window (days, 1-90)').fill('30');
    await page.getByRole('button', { name: 'Run query' }).click();
    await page.getByRole('link', { name: list.sessions[0].session_id }).click();
    await page.getByRole('heading', { level: 1, name: 'Session timeline' }).waitFor();
  },
);

test.serial(
  'triage an issue: the change shows at once and is stored; a refused change is rolled back',
  onPage,
  async (t, page, w) => {
    await page.goto(`${stack.baseUrl}/#/issues?${siteQ()}&status=all`);
    const row = page.getByTestId('issue-row').first();
    await row.waitFor();
    const status = row.getByLabel('Status');
    const id = (await row.getByRole('link').first().getAttribute('href'))!.match(/issue\/([0-9a-f-]+)/)![1];
    await status.selectOption('triaged');
    const sec = { authorization: `Bearer ${stack.tenant.secretKey}` };
    await eventually(
      async () =>
        (await getJson(`${stack.baseUrl}/v1/query/issues/${id}?site_id=${stack.tenant.siteId}`, sec)).body.data
          .status === 'triaged' || undefined,
    );
    // The server refuses the next change: the control returns to the stored status and says why.
    w.expectFailure(`/v1/manage/issues/${id}`);
    await page.route(`**/v1/manage/issues/${id}`, (r) =>
      r.fulfill({
        status: 409,
        contentType: 'application/json',
        body: JSON.stringify({ data: null, error: { code: 'conflict', message: 'changed elsewhere', status: 409 } }),
      }),
    );
    await status.selectOption('ignored');
    await row.getByRole('alert').filter({ hasText: 'change undone' }).waitFor();
    t.is(await status.inputValue(), 'triaged');
    t.is(
      (await getJson(`${stack.baseUrl}/v1/query/issues/${id}?site_id=${stack.tenant.siteId}`, sec)).body.data.status,
      'triaged',
    );
  },
);

test.serial('acknowledge the fired alert', onPage, async (t, page, w) => {
  await page.goto(`${stack.baseUrl}/#/alerts?${siteQ()}`);
  const card = page.getByTestId('alert').filter({ hasText: 'Checkout score spike' });
  await card.getByRole('button', { name: 'Acknowledge' }).click();
  await card.getByText('acknowledged', { exact: true }).waitFor();
  // Shown at once (optimistic); stored when the PATCH answers.
  const stored = await eventually(async () => {
    const r = await getJson(`${stack.baseUrl}/v1/query/alerts/${seeded.alertId}?site_id=${stack.tenant.siteId}`, {
      authorization: `Bearer ${stack.tenant.secretKey}`,
    });
    const s = r.body.data.status ?? r.body.data.alert?.status;
    return s === 'acknowledged' ? s : undefined;
  });
  t.is(stored, 'acknowledged');
});

test.serial('switch the heatmap device: mobile points over the mobile screenshot', onPage, async (t, page, w) => {
  await page.goto(`${stack.baseUrl}/#/page?${siteQ()}&page=%2Fcheckout`);
  await page.getByRole('img', { name: 'Screenshot of /checkout (desktop)' }).waitFor();
  await page.getByLabel('mobile and tablet').check();
  await page.getByRole('img', { name: 'Screenshot of /checkout (mobile)' }).waitFor();
  await page.getByTestId('heat-status').filter({ hasText: '(mobile)' }).waitFor();
  const mobile = await getJson(
    `${stack.baseUrl}/v1/query/page-heatmap?site_id=${stack.tenant.siteId}&page=/checkout&device=mobile`,
    { authorization: `Bearer ${stack.tenant.secretKey}` },
  );
  t.regex(await page.getByTestId('heat-status').innerText(), new RegExp(`^${mobile.body.data.count} signals`));
  await page.screenshot({ path: path.join(ARTIFACTS, 'page-mobile-heatmap-1280.png'), fullPage: true });
});

test.serial('a new site shows the SDK snippet; copy puts it on the clipboard', onPage, async (t, page, w) => {
  await page.goto(`${stack.baseUrl}/#/settings?${siteQ()}&tab=sites`);
  await page.getByLabel('Name').fill('Docs site');
  await page.getByLabel('URL').fill('https://docs.example');
  await page.getByRole('button', { name: 'Create site' }).click();
  await page.getByTestId('secret').first().waitFor();
  await page.getByRole('link', { name: 'Docs site' }).click();
  await page.getByRole('heading', { name: /No data yet/ }).waitFor();
  await page.getByRole('button', { name: 'Issue a publishable key for it' }).click();
  await page.getByText(/data-key="svc_pub_/).waitFor();
  await page.getByRole('button', { name: 'Copy snippet' }).click();
  await page.getByText('Copied').waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  t.regex(copied, new RegExp(`^<script src="${stack.baseUrl}/v1/sdk\\.js" data-key="svc_pub_\\w+" defer></script>$`));
  await page.screenshot({ path: path.join(ARTIFACTS, 'overview-empty-1280.png'), fullPage: true });
});

test.serial(
  'create a key (secret shown once, and it works), then revoke it (refused from then on)',
  onPage,
  async (t, page, w) => {
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${stack.baseUrl}/#/settings?${siteQ()}&tab=keys`);
    await page.getByLabel('Name', { exact: true }).fill('ci reader');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByTestId('secret').innerText();
    t.regex(key, /^svc_sec_/);
    const read = () =>
      getJson(`${stack.baseUrl}/v1/query/scores?site_id=${stack.tenant.siteId}`, { authorization: `Bearer ${key}` });
    t.is((await read()).status, 200);
    const row = page.getByTestId('key-row').filter({ hasText: 'ci reader' });
    await row.getByRole('button', { name: /Revoke/ }).click();
    await row.getByText(/^revoked/).waitFor();
    t.is((await read()).status, 401);
  },
);

test.serial(
  'add a webhook endpoint (signing secret shown once) and send it a test: delivered and in its log',
  onPage,
  async (t, page, w) => {
    await page.goto(`${stack.baseUrl}/#/settings?${siteQ()}&tab=webhooks`);
    await page.getByLabel('URL').fill(`${receiver.url}/hooks/friction`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    t.regex(await page.getByTestId('secret').innerText(), /^whsec_/);
    await page.getByRole('button', { name: `Send test to ${receiver.url}/hooks/friction` }).click();
    await page.getByText(/Test event .* queued/).waitFor();
    await eventually(
      async () =>
        receiver.received.some((r) => r.path === '/hooks/friction' && r.body.includes('webhook.test')) || undefined,
      { timeoutMs: 20_000 },
    );
    // The delivery log shows it: the tab is left and opened again (in the page, no reload) until the dispatcher's record is there.
    await eventually(
      async () => {
        await page.goto(`${stack.baseUrl}/#/settings?${siteQ()}&tab=usage`);
        await page.goto(`${stack.baseUrl}/#/settings?${siteQ()}&tab=webhooks`);
        await page.getByText('Delivery log').first().click();
        return (await page.getByRole('cell', { name: 'webhook.test' }).count()) > 0 || undefined;
      },
      { timeoutMs: 20_000, stepMs: 500 },
    );
  },
);

test.serial(
  'live updates: the overview shows a new alert without a reload, and unchanged polls answer 304',
  onPage,
  async (t, page, w) => {
    await page.addInitScript(() => localStorage.setItem('friction.pollMs', '1000'));
    await page.goto(`${stack.baseUrl}/#/overview?${siteQ()}`);
    await page.getByTestId('overall-score').waitFor();
    // Each poll revalidates what the browser kept: it sends the ETag it got (the page sees the kept answer as 200).
    const revalidated: string[] = [];
    page.on('request', (r) => {
      // A poll still under way when the page closes has no headers to read any more (an unhandled rejection
      // otherwise): the first revalidation, all the test waits for, was read long before.
      if (r.url().includes('/v1/query/scores'))
        r.allHeaders().then(
          (h) => h['if-none-match'] && revalidated.push(h['if-none-match']),
          () => undefined,
        );
    });
    let navigations = 0;
    page.on('framenavigated', () => navigations++);
    await insertAlertRow(stack.infra.database.db, stack.tenant.siteId, {
      rule_name: 'Signup budget broken',
      page: '/signup',
      trigger_type: 'budget',
      score_before: 30,
      score_after: 49,
    });
    await page.getByRole('link', { name: 'Signup budget broken' }).waitFor();
    // A degradation of the organization appears as a banner the same way.
    await stack.infra.database.db
      .insertInto('degradation_events')
      .values({
        id: crypto.randomUUID(),
        org_id: stack.tenant.orgId,
        kind: 'endpoint_disabled',
        subject: crypto.randomUUID(),
        message: 'A webhook endpoint was disabled after 20 failed deliveries.',
        started_at: new Date(),
        recovered_at: null,
        details: '{}',
      })
      .execute();
    await page.getByRole('alert').filter({ hasText: 'Degraded: endpoint disabled' }).waitFor();
    t.deepEqual(await axeViolations(page), []);
    t.is(navigations, 0, 'no reload');
    const etag = await eventually(async () => revalidated[0]);
    const again = await fetch(`${stack.baseUrl}/v1/query/scores?site_id=${stack.tenant.siteId}`, {
      headers: { authorization: `Bearer ${stack.tenant.owner.token}`, 'if-none-match': etag },
    });
    t.is(again.status, 304, 'the server answers an unchanged poll without a body');
    t.is(await again.text(), '');
    await page.evaluate(() => localStorage.removeItem('friction.pollMs'));
  },
);
