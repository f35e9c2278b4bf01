import test from 'ava';
import { randomUUID } from 'node:crypto';
import { useStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';

// The processor's clock is injected: the test moves it forward to reach the nightly triage.
const DAY = 86_400_000;
let offset = 0;
const stack = useStack(test, { now: () => Date.now() + offset, env: { TRIAGE_HOUR_UTC: '0' } });

async function struggle(key: string, selector: string, sessions: number) {
  for (let i = 0; i < sessions; i++) {
    const ts = new Date().toISOString();
    const r = await postJson(
      `${stack.baseUrl}/v1/ingest`,
      {
        session_id: `s-${randomUUID()}`,
        sent_at: ts,
        context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
        events: [
          { id: randomUUID(), type: 'page_view', ts, page: '/cart' },
          {
            id: randomUUID(),
            type: 'signal',
            ts,
            page: '/cart',
            signal: 'dead_click',
            selector,
            label: 'Apply coupon',
          },
        ],
      },
      { authorization: `Bearer ${key}` },
    );
    if (r.status !== 202) throw new Error(JSON.stringify(r.body));
  }
}

test.serial(
  'the nightly triage resolves issues quiet for 7 days, records the change, and never touches a frozen issue',
  async (t) => {
    const { tenant } = stack;
    const read = (path: string) => getJson(`${stack.baseUrl}${path}`, { authorization: `Bearer ${tenant.secretKey}` });
    await struggle(tenant.publishableKey, '#coupon', 6);
    await struggle(tenant.publishableKey, '#gift-card', 6);
    const issues = await eventually(async () => {
      const r = await read(`/v1/query/issues?site_id=${tenant.siteId}`);
      return r.body.data.total === 2 ? r.body.data.issues : undefined;
    });
    const frozen = issues.find((i: { selector: string }) => i.selector === '#gift-card');
    const quiet = issues.find((i: { selector: string }) => i.selector === '#coupon');
    const patch = await fetch(`${stack.baseUrl}/v1/manage/issues/${frozen.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${tenant.owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ frozen: true, note: 'waiting on the payments team' }),
    });
    t.is(patch.status, 200);

    offset = 8 * DAY;
    await stack.tick();
    const after = await read(`/v1/query/issues/${quiet.id}?site_id=${tenant.siteId}`);
    t.is(after.body.data.status, 'resolved');
    t.is(after.body.data.signal_count, 0, 'its cluster window emptied');
    t.true(
      after.body.data.history.some(
        (h: { source: string; kind: string }) => h.source === 'triage' && h.kind === 'resolve',
      ),
    );
    const kept = await read(`/v1/query/issues/${frozen.id}?site_id=${tenant.siteId}`);
    t.is(kept.body.data.status, 'open', 'frozen: never resolved by the triage');
    t.false(kept.body.data.history.some((h: { source: string }) => h.source === 'triage'));

    // Once per day: a second tick the same day changes nothing.
    const before = (await read(`/v1/query/issues/${quiet.id}?site_id=${tenant.siteId}`)).body.data.history.length;
    await stack.tick();
    t.is((await read(`/v1/query/issues/${quiet.id}?site_id=${tenant.siteId}`)).body.data.history.length, before);
  },
);
