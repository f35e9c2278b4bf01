import test from 'ava';
import { randomUUID } from 'node:crypto';
import { useStack } from '../../ops/testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';

// The new read routes on the embedded default (PGlite + TimescaleDB): their SQL runs there too.
const stack = useStack(test, { embedded: true });

test('every new read route answers on the embedded database, with ingested data', async (t) => {
  const { tenant } = stack;
  const t0 = Date.now() - 60_000;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const sid = `emb-${randomUUID()}`;
  const r = await postJson(
    `${stack.baseUrl}/v1/ingest`,
    {
      session_id: sid,
      sent_at: new Date().toISOString(),
      context: { device: 'mobile', viewport: { w: 400, h: 800 }, source: 'ads' },
      events: [
        { id: randomUUID(), type: 'page_view', ts: at(0), page: '/a' },
        {
          id: randomUUID(),
          type: 'signal',
          ts: at(1),
          page: '/a',
          signal: 'rage_click',
          selector: '#go',
          x: 500,
          y: 500,
          vx: 100,
          vy: 200,
          meta: { confidence: 0.5 },
        },
        { id: randomUUID(), type: 'page_view', ts: at(2), page: '/b' },
        { id: randomUUID(), type: 'conversion', ts: at(3), page: '/b', value: 10 },
      ],
    },
    { authorization: `Bearer ${tenant.publishableKey}` },
  );
  t.is(r.status, 202);
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const get = (path: string) => getJson(`${stack.baseUrl}${path}&site_id=${tenant.siteId}`, auth);
  await eventually(async () => (await get('/v1/query/page?page=/a')).status === 200);
  t.is((await get('/v1/query/page?page=/a')).body.data.page, '/a');
  t.is((await get('/v1/query/trends?days=3')).body.data.history.length, 1);
  t.is((await get('/v1/query/compare?a=/a&b=/b')).body.data.higher_friction, 'a');
  t.is((await get(`/v1/query/session?session_id=${sid}`)).body.data.events.length, 3);
  t.deepEqual((await get('/v1/query/element-heatmap?page=/a&selector=%23go')).body.data.points, [
    { rx: 0.5, ry: 0.5, signal: 'rage_click' },
  ]);
  t.deepEqual((await get('/v1/query/page-heatmap?page=/a&device=mobile')).body.data.points, [
    { vx: 0.1, vy: 0.2, signal: 'rage_click', el: '#go' },
  ]);
  t.deepEqual((await get('/v1/query/flows?')).body.data.edges, [{ from: '/a', to: '/b', sessions: 1, transitions: 1 }]);
  t.like((await get('/v1/query/journeys/friction?')).body.data.edges[0], { from: '/a', to: '/b', friction_weight: 5 });
  t.is((await get('/v1/query/recommendations?')).status, 200);
  t.is((await get('/v1/query/revenue?')).body.data.enabled, false);
  t.like((await get('/v1/query/insights?')).body.data, {
    enabled: true,
    sources: [{ key: 'ads', confused: 1, confused_converted: 1 }],
  });
  const csv = await fetch(`${stack.baseUrl}/v1/query/export/events.csv?site_id=${tenant.siteId}`, { headers: auth });
  t.is((await csv.text()).split('\r\n').length, 6, 'header, four events, final CRLF');
});
