/**
 * Issue 30 item 8: the SDK's optOut() / optIn() in headless Chromium with the SDK served by ingest. After optOut()
 * nothing more reaches ingest (what was queued is dropped), on this page and on the next ones of the tab; optIn()
 * resumes recording from the next page load.
 */
import test from 'ava';
import { useChromium } from '../../ingest/sdk/testing/browser.ts';
import { sdkCookie, useFixtures } from '../../ingest/sdk/testing/fixture-server.ts';
import { Visitor } from '../../ingest/sdk/testing/visitor.ts';
import { seeded } from '../../shared/seeded-random.ts';
import { useStack } from '../testing/stack.ts';

const stack = useStack(test, { processor: false });
const browser = useChromium(test);
const fixtures = useFixtures(test);

type F = { optOut(): void; optIn(): void; flush(): void; stats(): { sampled: boolean; queued: number } };

test('optOut() stops recording at once and on later pages of the tab; optIn() resumes from the next page load', async (t) => {
  const { tenant } = stack;
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  t.teardown(() => context.close());
  await context.addCookies([
    {
      name: 'friction',
      value: sdkCookie({
        key: tenant.publishableKey,
        src: `${stack.baseUrl}/v1/sdk.js`,
        config: { flushInterval: 250 },
      }),
      url: fixtures.url,
    },
  ]);
  const sent: string[] = [];
  context.on('request', (r) => {
    if (r.method() === 'POST' && r.url() === `${stack.baseUrl}/v1/ingest`) sent.push(r.postData() ?? '');
  });
  const page = await context.newPage();
  const v = new Visitor(page, fixtures.url, seeded(30));
  const friction = () => page.waitForFunction(() => 'Friction' in window);
  const sentWithin = async (ms: number) => {
    const before = sent.length;
    await page.waitForTimeout(ms); // an absence can only be shown by waiting; the flush interval is 250 ms
    return sent.length - before;
  };

  await v.goto('/shop.html');
  await friction();
  await page.waitForFunction(() => (window as unknown as { Friction: F }).Friction.stats().queued === 0);
  await t.notThrowsAsync(async () => {
    while (sent.length === 0) await page.waitForTimeout(50);
  });
  t.true(
    sent.some((b) => b.includes('page_view')),
    'recording before the opt-out',
  );

  // Queued events are dropped: a click is queued, then the visitor opts out before the next flush.
  await v.click('#wishlist');
  await page.evaluate(() => (window as unknown as { Friction: F }).Friction.optOut());
  for (let i = 0; i < 4; i++) await page.click('#description');
  t.is(await sentWithin(1500), 0, 'nothing after optOut() on this page');

  await page.reload();
  await friction();
  t.false(
    await page.evaluate(() => (window as unknown as { Friction: F }).Friction.stats().sampled),
    'the next page starts opted out',
  );
  await v.click('#wishlist');
  t.is(await sentWithin(1500), 0, 'nothing on the next page either');

  await page.evaluate(() => (window as unknown as { Friction: F }).Friction.optIn());
  // Counted before the reload: the new page's page_view can be flushed (250 ms) before the test sees the SDK loaded.
  const before = sent.length;
  await page.reload();
  await friction();
  await page.waitForFunction(() => (window as unknown as { Friction: F }).Friction.stats().sampled);
  await t.notThrowsAsync(async () => {
    const until = Date.now() + 15_000;
    const resumed = () => sent.slice(before).some((b) => b.includes('page_view'));
    while (!resumed() && Date.now() < until) await page.waitForTimeout(50);
    if (!resumed()) throw new Error('no page_view sent after optIn() and a reload');
  });
});
