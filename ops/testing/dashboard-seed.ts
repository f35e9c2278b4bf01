/**
 * Test-only: a Friction with what the dashboard shows on a working morning: `friction demo` traffic (the same
 * visitor journeys), two production deploys and a fired alert, and a local site for the screenshot capturer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEMO_ELEMENTS, runDemo } from '../demo.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import type { TestStack } from './stack.ts';
import { insertAlertRow } from './alert-row.ts';

/** The shop the demo traffic describes, as pages a browser can render for the screenshot capturer. */
export async function serveShop(): Promise<{ url: string; close(): Promise<void> }> {
  // One viewport high, elements where the demo's clicks land (DEMO_ELEMENTS), so the heat sits on them.
  const pay = DEMO_ELEMENTS['#pay-now'];
  const pct = (f: number) => `${(f * 100).toFixed(1)}%`;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<!doctype html><meta name="viewport" content="width=device-width">
      <body style="font-family:sans-serif;margin:0;height:100vh;overflow:hidden;position:relative;background:#fafafa">
      <header style="background:#234;color:#fff;padding:2vh 20px;font-size:20px">Demo shop</header>
      <main style="padding:20px"><h1>${path}</h1><p>Two items, shipping to your door, total $48.00.</p></main>
      <button id="pay-now" style="position:absolute;left:${pct(pay.x)};top:${pct(pay.y)};width:${pct(pay.w)};height:${pct(pay.h)};font-size:22px;background:#0a7;color:#fff;border:0;border-radius:8px">Pay now</button>
      </body>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface Seeded {
  pages: string[];
  issueIds: string[];
  alertId: string;
  deployIds: string[];
}

export async function seedDashboard(
  stack: TestStack,
  opts: { sessions?: number; siteUrl?: string } = {},
): Promise<Seeded> {
  const t = stack.tenant;
  const owner = { authorization: `Bearer ${t.owner.token}` };
  if (opts.siteUrl) {
    const r = await fetch(`${stack.baseUrl}/v1/manage/site/${t.siteId}`, {
      method: 'PATCH',
      headers: { ...owner, 'content-type': 'application/json' },
      body: JSON.stringify({ url: opts.siteUrl }),
    });
    if (r.status !== 200) throw new Error(`site url: ${r.status} ${await r.text()}`);
  }
  const secret = { authorization: `Bearer ${t.secretKey}` };
  const q = (path: string) =>
    getJson(`${stack.baseUrl}${path}${path.includes('?') ? '&' : '?'}site_id=${t.siteId}`, secret);
  await runDemo(stack.config, { sessions: opts.sessions ?? 150, baseUrl: stack.baseUrl, key: t.publishableKey });
  // Deploys measure against the current score, so the first one waits for scores.
  const scored = await eventually(
    async () => {
      await stack.tick();
      const s = await q('/v1/query/scores');
      const i = await q('/v1/query/issues?status=open');
      return s.body.data?.pages?.length >= 3 && i.body.data?.issues?.length >= 2
        ? {
            pages: s.body.data.pages.map((p: { page: string }) => p.page) as string[],
            issues: i.body.data.issues.map((x: { id: string }) => x.id) as string[],
          }
        : undefined;
    },
    { timeoutMs: 60_000, stepMs: 250 },
  );
  const deployIds: string[] = [];
  for (const version of ['v1.4.0', 'v1.5.0']) {
    const r = await postJson(`${stack.baseUrl}/v1/deploys`, { version, environment: 'production' }, secret);
    if (r.status !== 201 && r.status !== 200)
      throw new Error(`deploy ${version}: ${r.status} ${JSON.stringify(r.body)}`);
    deployIds.push(r.body.data.id ?? r.body.data.deploy?.id);
  }
  const alertId = crypto.randomUUID();
  await insertAlertRow(stack.infra.database.db, t.siteId, {
    id: alertId,
    rule_name: 'Checkout score spike',
    score_before: 21.5,
    score_after: 63.2,
  });
  return { pages: scored.pages, issueIds: scored.issues, alertId, deployIds };
}
