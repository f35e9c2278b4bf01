/**
 * Issue 31, item 7: environment everywhere. Staging traffic only, then every read route that answers from raw
 * traffic (journeys, flows, session, CSV export, revenue, recommendations, insights), once for production (the
 * default) and once for staging: production's answers hold none of it; staging's hold it. Real services.
 */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { startTestStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import { allEventsStored } from '../testing/session-traffic.ts';
import { signalEvent } from '../testing/sdk-batch.ts';

test('staging traffic never reaches production answers of journeys, flows, session, export, revenue, recommendations or insights', async (t) => {
  const stack = await startTestStack();
  t.teardown(() => stack.stop());
  const { tenant } = stack;
  const db = stack.infra.database.db;
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  for (const env of ['production', 'staging']) {
    const r = await fetch(`${stack.baseUrl}/v1/manage/sdk-config/${env}?site_id=${tenant.siteId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${tenant.owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ revenue_config: { enabled: true, currency: 'EUR' } }),
    });
    t.is(r.status, 200);
  }
  // 12 staging visits: /cart → /checkout, rage clicks on Pay, every other one buys.
  let sent = 0;
  const now = Date.now();
  const sessionId = 'staging-visit-0';
  for (let i = 0; i < 12; i++) {
    const ts = now - 60 * 60_000 + i * 60_000;
    const at = (d: number) => new Date(ts + d).toISOString();
    const events: Record<string, unknown>[] = [
      { id: randomUUID(), type: 'page_view', ts: at(0), page: '/cart' },
      { id: randomUUID(), type: 'page_view', ts: at(1000), page: '/checkout' },
      ...[0, 1, 2].map((k) => signalEvent(ts + 2000 + k, '/checkout')),
      ...(i % 2 === 0 ? [{ id: randomUUID(), type: 'conversion', ts: at(5000), page: '/checkout', value: 100 }] : []),
    ];
    const r = await postJson(
      `${stack.baseUrl}/v1/ingest`,
      {
        session_id: `staging-visit-${i}`,
        sent_at: new Date().toISOString(),
        context: { device: 'desktop', viewport: { w: 1280, h: 800 }, environment: 'staging' },
        events,
      },
      { authorization: `Bearer ${tenant.publishableKey}` },
    );
    t.is(r.status, 202, JSON.stringify(r.body));
    sent += r.body.data.accepted;
  }
  await allEventsStored(db, tenant.siteId, sent);

  const read = async (path: string, environment: 'production' | 'staging') => {
    const r = await fetch(
      `${stack.baseUrl}${path}${path.includes('?') ? '&' : '?'}site_id=${tenant.siteId}&environment=${environment}`,
      { headers: auth },
    );
    const text = await r.text();
    return {
      status: r.status,
      text,
      body: r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    };
  };
  for (const [path, analysed] of [
    ['/v1/query/journeys/friction', (d: any) => d.sessions_analyzed],
    ['/v1/query/flows', (d: any) => d.sessions_analyzed],
    ['/v1/flows', (d: any) => d.sessions_analyzed],
  ] as const) {
    t.is(analysed((await read(path, 'production')).body.data), 0, `${path} production`);
    t.is(analysed((await read(path, 'staging')).body.data), 12, `${path} staging`);
  }
  t.is((await read(`/v1/query/session?session_id=${sessionId}`, 'production')).status, 404);
  t.is((await read(`/v1/session?session_id=${sessionId}`, 'production')).status, 404);
  t.is(
    (await read(`/v1/query/session?session_id=${sessionId}`, 'staging')).body.data.events.length,
    5,
    'its page views and signals',
  );
  for (const path of ['/v1/query/export/events.csv', '/v1/export/events.csv']) {
    t.is((await read(path, 'production')).text.trim().split('\n').length, 1, `${path}: the header only`);
    const csv = (await read(path, 'staging')).text;
    t.is(csv.trim().split('\n').length, 1 + sent, path);
  }
  for (const path of ['/v1/query/revenue', '/v1/revenue']) {
    const production = (await read(path, 'production')).body.data;
    t.false(production.enabled, `${path}: production has no conversions`);
    t.deepEqual(production.issues, []);
    t.like((await read(path, 'staging')).body.data, { enabled: true, average_conversion_value: 100 });
  }
  const insights = (env: 'production' | 'staging') => read('/v1/query/insights?days=1', env);
  t.false((await insights('production')).body.data.enabled);
  t.like((await insights('staging')).body.data, { enabled: true });
  t.true((await insights('staging')).body.data.pages.some((p: any) => p.key === '/checkout'));
  // Staging's issue (once the processor clustered it) is staging's recommendation, never production's.
  const rec = await eventually(
    async () => {
      const r = (await read('/v1/query/recommendations', 'staging')).body.data;
      return r.recommendations.length > 0 ? r : undefined;
    },
    { timeoutMs: 30_000 },
  );
  t.is(rec.recommendations[0].page, '/checkout');
  t.deepEqual((await read('/v1/query/recommendations', 'production')).body.data.recommendations, []);
  for (const path of [
    '/v1/query/journeys/friction',
    '/v1/query/flows',
    '/v1/query/export/events.csv',
    '/v1/query/revenue',
    '/v1/query/insights',
    `/v1/query/session?session_id=${sessionId}`,
  ]) {
    const bad = await getJson(
      `${stack.baseUrl}${path}${path.includes('?') ? '&' : '?'}site_id=${tenant.siteId}&environment=qa`,
      auth,
    );
    t.is(bad.status, 400, path);
    t.is(bad.body.error.details[0].path, 'environment', path);
  }
});
