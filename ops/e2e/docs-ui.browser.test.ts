/**
 * The docs page in headless Chromium (issue 28, item 4): served with its CSP, it loads with no console error and no
 * request to another origin, without the hosted service's buttons (Ask AI, the developer toolbar's Share and
 * Deploy), with the auth header written out in the introduction and the bearer scheme selected, ready for a key.
 */
import test from 'ava';
import { launchChromium } from '../../ingest/sdk/testing/browser.ts';
import { getJson } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';

test('/docs loads with no console error, no hosted-service buttons, the auth header and the bearer ready', async (t) => {
  const stack = await startTestStack({ processor: false });
  const browser = await launchChromium();
  t.teardown(async () => {
    await browser.close();
    await stack.stop();
  });
  const doc = await getJson(`${stack.baseUrl}/v1/openapi.json`);
  t.deepEqual(
    doc.body.security,
    [{ bearer: [] }],
    'top-level security: every operation needs the bearer unless it says otherwise',
  );

  const page = await browser.newPage();
  const problems: string[] = [];
  let documentLoaded!: () => void;
  const loaded = new Promise<void>((r) => {
    documentLoaded = r;
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    // Scalar's last step of loading a document logs its time; its requests (and any error) come before.
    if (/^addDocument: \d+ ms/.test(m.text())) documentLoaded();
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(stack.baseUrl) && !r.url().startsWith('data:'))
      problems.push(`request to another origin: ${r.url()}`);
  });
  const res = await page.goto(`${stack.baseUrl}/docs`);
  t.regex(res?.headers()['content-security-policy'] ?? '', /connect-src 'self'/);
  // Rendered: the introduction and the authentication box are on the page.
  await page.getByText('Bearer Token', { exact: false }).first().waitFor({ timeout: 60_000 });
  const text = await page.evaluate(() => document.body.innerText);
  t.true(
    text.includes('Authorization: Bearer <API key or user JWT>'),
    'the auth header is written out, not swallowed as an HTML tag',
  );
  t.false(text.includes('No authentication selected'));
  for (const hosted of ['Ask AI', 'Developer Tools', 'Deploy', 'Share'])
    t.false(new RegExp(`\\b${hosted}\\b`).test(text), `no "${hosted}"`);
  await loaded;
  t.deepEqual(problems, []);
});
