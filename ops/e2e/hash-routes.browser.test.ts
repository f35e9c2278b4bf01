/**
 * Issue 13, item 5, through the running service: a hash-routed help centre (`/kb/#/payments`, `/kb/#/billing`)
 * visited in headless Chromium with the SDK served by ingest. Each route must come out of the read API as a page of
 * its own (stored as `/kb#/payments`), with its own elements, while an in-page anchor (`#section-2`) stays the
 * page it is on and a route's query string (`#/search?q=…`) never reaches the store.
 */
import test from 'ava';
import { SITE_CONFIG } from '../../ingest/sdk/fixtures/scenarios.ts';
import { useChromium } from '../../ingest/sdk/testing/browser.ts';
import { sdkCookie, useFixtures } from '../../ingest/sdk/testing/fixture-server.ts';
import { settle } from '../../ingest/sdk/testing/run-visit.ts';
import { Visitor } from '../../ingest/sdk/testing/visitor.ts';
import { seeded } from '../../shared/seeded-random.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

const stack = useStack(test);
const browser = useChromium(test);
const fixtures = useFixtures(test);

test('hash-routed views are separate pages in the read API; anchors and route queries are not', async (t) => {
  const { tenant } = stack;
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const src = `${stack.baseUrl}/v1/sdk.js`;
  await context.addCookies([
    {
      name: 'friction',
      value: sdkCookie({ key: tenant.publishableKey, src, config: { ...SITE_CONFIG, flushInterval: 250 } }),
      url: fixtures.url,
    },
  ]);
  const sent: string[] = [];
  context.on('request', (r) => {
    if (r.method() === 'POST' && r.url() === `${stack.baseUrl}/v1/ingest`) sent.push(r.postData() ?? '');
  });
  try {
    const page = await context.newPage();
    const v = new Visitor(page, fixtures.url, seeded(13));
    await v.goto('/kb/');
    await v.click('#kb-section');
    for (const route of ['payments', 'billing']) {
      await v.click(`#kb-${route}`);
      await page.locator('#kb-view').filter({ hasText: route }).waitFor();
      await v.click('#kb-helpful');
      await settle(page);
    }
    await v.type('#kb-q', 'chargeback-secret');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.hash.startsWith('#/search'));
    await settle(page);
  } finally {
    await context.close();
  }
  t.false(sent.join('\n').includes('chargeback-secret'), "the search route's query never left the page");

  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const pages = await eventually(
    async () => {
      const r = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${tenant.siteId}`, auth);
      const list = (r.body.data.pages as { page: string }[]).map((p) => p.page).sort();
      return list.length >= 4 && list;
    },
    { timeoutMs: 30_000 },
  );
  t.deepEqual(
    pages,
    ['/kb', '/kb#/billing', '/kb#/payments', '/kb#/search'],
    'one page per route, the anchor and the route query gone',
  );

  for (const route of ['/kb#/payments', '/kb#/billing']) {
    const r = await eventually(
      async () => {
        await stack.tick();
        const res = await getJson(
          `${stack.baseUrl}/v1/query/elements?site_id=${tenant.siteId}&page=${encodeURIComponent(route)}`,
          auth,
        );
        return res.body.data.elements?.length && res.body.data;
      },
      { timeoutMs: 30_000 },
    );
    t.deepEqual(
      (r.elements as { page: string; selector: string }[]).map((e) => `${e.page} ${e.selector}`),
      [`${route} #kb-helpful`],
      `${route}: its own element, nothing from the other route`,
    );
  }
  const stored = await stack.infra.database.db
    .selectFrom('events')
    .select('page')
    .distinct()
    .where('site_id', '=', tenant.siteId)
    .execute();
  t.false(
    stored.some((e) => e.page.includes('?') || e.page.includes('section-2')),
    stored.map((e) => e.page).join(', '),
  );
});
